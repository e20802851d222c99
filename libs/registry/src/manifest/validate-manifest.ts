import { createHash } from 'node:crypto';
import { TimeSlicer } from '../time-slicer';
import { jsonDepthExceeds } from './json-depth';
import { firstUnsafePattern } from './unsafe-patterns';
import type { ManifestProblem, PullErrorType } from './manifest-errors';
import type { AcceptedManifest, ManifestTool } from './manifest.types';
import type { SchemaChecker, SchemaProblem } from './schema-checker';
import { stringifyWithNumbers, type NumberTexts } from './number-texts';
import { optionalFieldProblems, publishedEntry } from './tool-fields';
import { MAX_TOOL_TAGS, toolTagsOf } from '@app/wire';

/** contract §5: tool names are `[A-Za-z0-9_./-]{1,64}`. */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_./-]{1,64}$/;

/** What a manifest is checked against: its bundle's configuration and limits. */
export interface ManifestExpectations {
  readonly bundleId: string;
  /** Every tool name must start with it; "" accepts any name (legacy local fixture only). */
  readonly namePrefix: string;
  readonly maxToolsPerBundle: number;
}

export type ManifestValidation =
  | { readonly ok: true; readonly manifest: AcceptedManifest }
  | {
      readonly ok: false;
      /** The type of the first problem: what lastFailureReason shows. */
      readonly errorType: PullErrorType;
      readonly revision?: string;
      /** Every problem found (at most MAX_PROBLEMS), for the log. */
      readonly problems: readonly ManifestProblem[];
    };

const MAX_PROBLEMS = 20;

/** Deepest nesting accepted in one tool (a schema a few dozen levels deep fits well). */
export const MAX_TOOL_DEPTH = 64;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A tool name that is also safe as the path of POST {baseEndpoint}/{toolName} (contract §10). */
function namePathProblem(name: string): string | undefined {
  const segments = name.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..')) {
    return 'has an empty, "." or ".." path segment, which would change the call path below baseEndpoint';
  }
  return undefined;
}

/** The rule a schema field breaks (for `detail`) and ajv's words or the `$schema` (log only). */
function checkSchema(
  value: unknown,
  field: 'inputSchema' | 'outputSchema',
  schemas: SchemaChecker,
): SchemaProblem | undefined {
  if (!isRecord(value)) return { rule: `${field} must be a JSON object` };
  if (value.type !== 'object') return { rule: `${field} must have root "type": "object"` };
  if (field === 'outputSchema') {
    const unsafe = firstUnsafePattern(value);
    if (unsafe !== undefined)
      return {
        rule: 'outputSchema has a pattern that may take exponential time to match',
        cause: `pattern ${JSON.stringify(unsafe.slice(0, 80))}`,
      };
  }
  // An outputSchema must compile for real: the gateway validates answers with it.
  const problem = schemas.check(value, { mustCompile: field === 'outputSchema' });
  return problem === undefined ? undefined : { ...problem, rule: `${field} ${problem.rule}` };
}

/** Checks one tool; returns the accepted tool, or the problems found. */
function validateTool(
  raw: unknown,
  index: number,
  expect: ManifestExpectations,
  schemas: SchemaChecker,
  numbers: NumberTexts | undefined,
): ManifestTool | ManifestProblem[] {
  const at = `tools[${index}]`;
  if (!isRecord(raw)) return [{ type: 'ManifestShapeError', detail: `${at} is not an object` }];
  if (jsonDepthExceeds(raw, MAX_TOOL_DEPTH)) {
    // A deeper tool would overflow the stack of the schema compiler or the serializer.
    return [
      { type: 'ManifestShapeError', detail: `${at} nests deeper than ${MAX_TOOL_DEPTH} levels` },
    ];
  }
  const problems: ManifestProblem[] = [];
  const add = (type: PullErrorType, detail: string, cause?: string): void => {
    problems.push(cause === undefined ? { type, detail } : { type, detail, cause });
  };
  const name = raw.name;
  // Only a name that passed the pattern is quoted: details may be shown to operators (§9).
  const label = typeof name === 'string' && TOOL_NAME_PATTERN.test(name) ? `${at} "${name}"` : at;

  if (typeof name !== 'string' || !TOOL_NAME_PATTERN.test(name)) {
    // The offending name goes to the log only: it is a fragment of the answer.
    add(
      'ToolNamePatternError',
      `${label}: name must match [A-Za-z0-9_./-]{1,64}`,
      typeof name === 'string'
        ? `name ${JSON.stringify(name.slice(0, 80))}`
        : `name of type ${name === null ? 'null' : typeof name}`,
    );
  } else {
    const pathProblem = namePathProblem(name);
    if (pathProblem) add('ToolNamePatternError', `${label}: name ${pathProblem}`);
    if (!name.startsWith(expect.namePrefix)) {
      // The prefix itself goes to the log only (contract §9: status never shows namePrefix).
      add(
        'ToolNamePrefixError',
        `${label}: name must start with the bundle's namePrefix`,
        `namePrefix "${expect.namePrefix}"`,
      );
    }
  }
  if (typeof raw.description !== 'string' || raw.description.trim() === '') {
    add('ToolDescriptionError', `${label}: description must be a non-empty string`);
  }
  const inputProblem = checkSchema(raw.inputSchema, 'inputSchema', schemas);
  if (inputProblem) add('InputSchemaError', `${label}: ${inputProblem.rule}`, inputProblem.cause);
  if (raw.outputSchema !== undefined) {
    const outputProblem = checkSchema(raw.outputSchema, 'outputSchema', schemas);
    if (outputProblem) {
      add('OutputSchemaError', `${label}: ${outputProblem.rule}`, outputProblem.cause);
    }
  }
  for (const rule of optionalFieldProblems(raw)) add('ManifestShapeError', `${label}: ${rule}`);
  const meta = raw._meta;
  let version = '';
  let timeoutMillis: number | undefined;
  let enabled = true;
  let tags: string[] | undefined;
  if (!isRecord(meta)) {
    add('ToolVersionError', `${label}: _meta.version is required`);
  } else {
    if (meta.version === undefined) {
      add('ToolVersionError', `${label}: _meta.version is required`);
    } else if (typeof meta.version !== 'string' || meta.version.trim() === '') {
      add('ToolVersionError', `${label}: _meta.version must be a non-empty string`);
    } else {
      version = meta.version;
    }
    if (meta.timeoutMillis !== undefined) {
      if (
        typeof meta.timeoutMillis !== 'number' ||
        !Number.isInteger(meta.timeoutMillis) ||
        meta.timeoutMillis <= 0
      ) {
        add(
          'ToolMetaError',
          `${label}: _meta.timeoutMillis must be a positive integer (ms) when present`,
        );
      } else {
        timeoutMillis = meta.timeoutMillis;
      }
    }
    if (meta.enabled !== undefined) {
      if (typeof meta.enabled !== 'boolean')
        add('ToolMetaError', `${label}: _meta.enabled must be true or false`);
      else enabled = meta.enabled;
    }
    // the gateway's own grouping (docs/operations.md §16 "Tags"): never published
    if (meta.tags !== undefined) {
      const given = toolTagsOf(meta.tags);
      if (given === undefined)
        add(
          'ToolMetaError',
          `${label}: _meta.tags must be a list of at most ${MAX_TOOL_TAGS} tags of [a-z0-9][a-z0-9._:-]{0,63}`,
        );
      else tags = [...given];
    }
  }
  if (problems.length > 0) return problems;

  const published = publishedEntry(raw);
  const publishedJson = stringifyWithNumbers(published, numbers);
  const fingerprint = createHash('sha1')
    .update(publishedJson)
    .update(`\u0000${version}\u0000${timeoutMillis ?? ''}\u0000${enabled}`)
    .update(tags === undefined ? '' : `\u0000${tags.join(' ')}`)
    .digest('base64url');
  return {
    name: published.name,
    publishedJson,
    fingerprint,
    version,
    timeoutMillis,
    enabled,
    ...(tags === undefined ? {} : { tags }),
  };
}

/**
 * The most characters of a manifest's `revision` the gateway keeps. The revision is only shown
 * and logged (contract §5: change detection, logs), and a Tool Service could otherwise make it
 * as long as `maxManifestBytes` allows and change it every round: it would be held in every
 * bundle status and catalog history entry and copied into each round's log lines
 * (docs/security.md "Hostile sources: bounded work").
 */
export const MAX_KEPT_REVISION_CHARS = 256;

/** A revision as kept: its first MAX_KEPT_REVISION_CHARS characters, never half a surrogate pair. */
export function keptRevision(revision: string): string {
  if (revision.length <= MAX_KEPT_REVISION_CHARS) return revision;
  const last = revision.charCodeAt(MAX_KEPT_REVISION_CHARS - 1);
  const end =
    last >= 0xd800 && last <= 0xdbff ? MAX_KEPT_REVISION_CHARS - 1 : MAX_KEPT_REVISION_CHARS;
  return revision.slice(0, end);
}

/**
 * Validates a pulled manifest against contract §5 and §7.1–7.3 (per bundle). Any problem
 * rejects the whole bundle: a partial bundle would make a needed tool silently disappear,
 * which is worse than keeping the last good copy (§7). A `baseEndpoint` inside the manifest
 * is ignored (§1: routing comes only from config). Work is time-sliced so that a large
 * manifest does not stall the event loop.
 */
export async function validateManifest(
  body: unknown,
  expect: ManifestExpectations,
  schemas: SchemaChecker,
  numbers?: NumberTexts,
): Promise<ManifestValidation> {
  const problems: ManifestProblem[] = [];
  const reject = (revision?: string): ManifestValidation => ({
    ok: false,
    errorType: problems[0]?.type ?? 'ManifestShapeError',
    revision,
    problems: problems.slice(0, MAX_PROBLEMS),
  });
  if (!isRecord(body)) {
    problems.push({ type: 'ManifestShapeError', detail: 'the manifest must be a JSON object' });
    return reject();
  }
  let revision: string | undefined;
  if (typeof body.revision === 'string') revision = keptRevision(body.revision);
  else if (typeof body.revision === 'number') revision = String(body.revision);
  else if (body.revision !== undefined && body.revision !== null) {
    problems.push({ type: 'ManifestShapeError', detail: 'revision must be a string when present' });
  }
  if (body.bundleId !== expect.bundleId) {
    problems.push({
      type: 'BundleIdMismatchError',
      // The received value is not quoted: it is a fragment of the answer (contract §9).
      detail: `bundleId ${body.bundleId === undefined ? 'is missing; it must be' : 'is not'} the configured id "${expect.bundleId}"`,
    });
  }
  if (!Array.isArray(body.tools)) {
    problems.push({ type: 'ManifestShapeError', detail: 'tools must be an array' });
    return reject(revision);
  }
  const rawTools: unknown[] = body.tools;
  const enabledCount = rawTools.filter(
    (t) => !(isRecord(t) && isRecord(t._meta) && t._meta.enabled === false),
  ).length;
  if (enabledCount > expect.maxToolsPerBundle) {
    // contract §7.3; checked before the per-tool work so an oversized manifest costs little.
    problems.push({
      type: 'TooManyToolsError',
      detail: `${enabledCount} enabled tools exceed maxToolsPerBundle ${expect.maxToolsPerBundle}`,
    });
    return reject(revision);
  }

  const slicer = new TimeSlicer();
  const tools: ManifestTool[] = [];
  const firstIndexByName = new Map<string, number>();
  for (let i = 0; i < rawTools.length; i++) {
    await slicer.maybeYield();
    const result = validateTool(rawTools[i], i, expect, schemas, numbers);
    if (Array.isArray(result)) {
      problems.push(...result);
      if (problems.length >= MAX_PROBLEMS) break;
      continue;
    }
    const first = firstIndexByName.get(result.name);
    if (first !== undefined) {
      problems.push({
        type: 'DuplicateToolNameError',
        detail: `tools[${i}] "${result.name}": the name is already used by tools[${first}]`,
      });
      continue;
    }
    firstIndexByName.set(result.name, i);
    tools.push(result);
  }
  if (problems.length > 0) return reject(revision);

  const hash = createHash('sha256');
  hash.update(revision ?? '');
  for (const tool of tools) hash.update(`\u0000${tool.fingerprint}`);
  // Kept in name order: the catalog merge then only concatenates bundles (contract §7.4).
  tools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return {
    ok: true,
    manifest: { bundleId: expect.bundleId, revision, tools, fingerprint: hash.digest('base64url') },
  };
}
