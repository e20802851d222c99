import { MetaKey, setOwnMember } from '@app/wire';
import { distinctMembers } from '../jsonrpc/raw-member';

/** The 2026 `_meta` envelope key that names the server that produced a result (wire notes G-9). */
const META_SERVER_INFO = MetaKey.serverInfo;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * An upstream's result as this gateway's clients (2025 era, `initialize` sessions) are to see
 * it (wire notes §2, G-7, G-9): a 2026-07-28 upstream puts on every result members of its
 * era's envelope that are not part of the result, and that a 2025 result never has:
 * `resultType: "complete"`, the cache hints `ttlMs` and `cacheScope`, and its own identity in
 * `_meta["io.modelcontextprotocol/serverInfo"]` (the gateway's identity is the one its client
 * got at initialize). Those are left out; everything else (content, structuredContent,
 * isError, every other `_meta` key) is returned unchanged. A result of a 2025 upstream has
 * none of them and comes back as it is (the same object). Any other `resultType`
 * (`input_required`, `task`) is not an envelope member and is left as sent. In a Task (a
 * CreateTaskResult, or the answer to `tasks/*`: `taskFields`) `ttlMs` is the task's lifetime, not a
 * cache hint, and stays.
 */
export function asLegacyResult(
  result: Record<string, unknown>,
  taskFields = false,
): Record<string, unknown> {
  const meta = result._meta;
  const stampedMeta = isRecord(meta) && META_SERVER_INFO in meta;
  const keepsTtl = taskFields || result.resultType === 'task';
  // a task (the answer of tasks/get and the like) has input requests of its own while its
  // status is input_required (SEP-2663): only a result's are stray
  const isTask = taskFields && (Object.hasOwn(result, 'taskId') || Object.hasOwn(result, 'status'));
  const strayRound = !isTask && hasStrayRoundMembers(result);
  // a finished task's result inlined in a tasks/* answer is a result too
  const inlined = taskFields && isRecord(result.result) ? result.result : undefined;
  const strayInlined = inlined !== undefined && hasStrayRoundMembers(inlined);
  if (
    result.resultType !== 'complete' &&
    (keepsTtl || !('ttlMs' in result)) &&
    !('cacheScope' in result) &&
    !stampedMeta &&
    !strayRound &&
    !strayInlined
  )
    return result;
  const legacy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(result)) {
    if ((key === 'ttlMs' && !keepsTtl) || key === 'cacheScope') continue;
    if (key === 'resultType' && value === 'complete') continue;
    if (strayRound && ROUND_MEMBERS.has(key)) continue;
    if (key === 'result' && strayInlined) {
      legacy.result = withoutRoundMembers(inlined);
      continue;
    }
    if (key === '_meta' && stampedMeta) {
      const rest = Object.fromEntries(
        Object.entries(value as Record<string, unknown>).filter(([k]) => k !== META_SERVER_INFO),
      );
      if (Object.keys(rest).length > 0) legacy._meta = rest;
      continue;
    }
    setOwnMember(legacy, key, value);
  }
  return legacy;
}

/**
 * A multi round-trip request's own members (MCP 2026-07-28): they belong to an
 * `input_required` result only, which MrtrCalls and LegacyInputBridge take (sealing the
 * upstream's `requestState` before any client sees it).
 */
const ROUND_MEMBERS: ReadonlySet<string> = new Set(['inputRequests', 'requestState']);

/**
 * Whether a result that is no `input_required` one carries `inputRequests` or `requestState`: a
 * 2026 upstream's stray ones, which would reach the client as they are (its raw `requestState`
 * unsealed, to a 2025 client members its era never has); they are left out in either era.
 */
function hasStrayRoundMembers(result: Readonly<Record<string, unknown>>): boolean {
  return (
    result.resultType !== 'input_required' &&
    (Object.hasOwn(result, 'inputRequests') || Object.hasOwn(result, 'requestState'))
  );
}

function withoutRoundMembers(result: Record<string, unknown>): Record<string, unknown> {
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(result))
    if (!ROUND_MEMBERS.has(key)) setOwnMember(rest, key, value);
  return rest;
}

/**
 * The text of `legacy` (asLegacyResult of the upstream's `result`) cut out of `text`, the
 * upstream's own text of `result`: the members asLegacyResult left out are cut, a `_meta` it
 * rewrote loses its serverInfo member, and every other member stays as the upstream wrote it
 * (numbers beyond double precision, escapes, order), so a 2026 upstream's result is passed on
 * without a parse-copy-serialize round, as a 2025 upstream's is (docs/operations.md §10
 * "Routing"). Undefined when the text cannot be cut so (not an object, or a name written twice,
 * where only the last counts): the caller serializes `legacy` then.
 */
export function legacyResultText(
  text: string,
  result: Record<string, unknown>,
  legacy: Record<string, unknown>,
): string | undefined {
  if (legacy === result) return text;
  const members = distinctMembers(text);
  if (members === undefined) return undefined;
  const kept: string[] = [];
  for (const member of members) {
    if (!Object.hasOwn(legacy, member.name)) continue;
    // a member asLegacyResult rewrote other than `_meta` (a task's inlined result): serialized
    if (member.name !== '_meta' && legacy[member.name] !== result[member.name]) return undefined;
    if (member.name !== '_meta' || legacy._meta === result._meta) {
      kept.push(text.slice(member.start, member.end));
      continue;
    }
    const metaText = text.slice(member.valueStart, member.end);
    const metaMembers = distinctMembers(metaText);
    if (metaMembers === undefined) return undefined;
    const metaKept = metaMembers
      .filter((entry) => entry.name !== META_SERVER_INFO)
      .map((entry) => metaText.slice(entry.start, entry.end));
    kept.push(`${text.slice(member.start, member.valueStart)}{${metaKept.join(',')}}`);
  }
  return `{${kept.join(',')}}`;
}

/**
 * A tool call's result for a 2025 client (wire notes §2.4, G-26), as the official dual-era
 * server (v2 SDK) gives it: `structuredContent` becomes `{result: …}` when it is not an object
 * (a 2026 tool may answer an array, a primitive or null) or when the tool's outputSchema was
 * wrapped for 2025 clients (`schemaWrapped`: its root is not `type: "object"`, legacyOutputSchema
 * in libs/mcp/src/handlers/revision-tool-fields.ts), so that it conforms to the schema the client
 * was listed; a value that is not an object also gets a text block with its JSON when the
 * content has none. undefined when the result needs no change.
 */
export function legacyStructuredResult(
  result: Record<string, unknown>,
  schemaWrapped: boolean,
): Record<string, unknown> | undefined {
  if (!('structuredContent' in result)) return undefined;
  const value = result.structuredContent;
  const object = isRecord(value);
  if (object && !schemaWrapped) return undefined;
  const content: readonly unknown[] = Array.isArray(result.content) ? result.content : [];
  const hasText = object || content.some((block) => isRecord(block) && block.type === 'text');
  return {
    ...result,
    content: hasText ? content : [...content, { type: 'text', text: JSON.stringify(value) }],
    structuredContent: { result: value },
  };
}

/**
 * The members of a 2026-07-28 result's own vocabulary (wire notes §2 G-7, §4) that a 2025 result
 * never has: its `resultType` and a multi round-trip request's `inputRequests` and `requestState`.
 */
const MODERN_RESULT_MEMBERS: ReadonlySet<string> = new Set([
  'resultType',
  'inputRequests',
  'requestState',
]);

/** Whether a 2025 upstream's result carries a member of MODERN_RESULT_MEMBERS. */
export function hasModernResultMembers(result: Readonly<Record<string, unknown>>): boolean {
  for (const key of MODERN_RESULT_MEMBERS) if (Object.hasOwn(result, key)) return true;
  return false;
}

/**
 * A 2025 upstream's result without its members of MODERN_RESULT_MEMBERS: a 2025 result has none
 * (wire notes §2; SCH25 `Result` allows any member), so members of those names are the upstream's
 * own, and read as the 2026 ones they would let a 2025 server fail its answers or start a multi
 * round-trip or a task, and hand its raw `requestState` to a 2026 client unsealed
 * (docs/operations.md §10 "Routing"). They are cut from its text as legacyResultText cuts (the
 * rest as the upstream wrote it); the text is dropped when it cannot be cut so, and the result is
 * serialized again.
 */
export function withoutModernResultMembers(
  result: Record<string, unknown>,
  text: string | undefined,
): { readonly result: Record<string, unknown>; readonly resultText?: string } {
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(result))
    if (!MODERN_RESULT_MEMBERS.has(key)) setOwnMember(rest, key, value);
  const cut = text === undefined ? undefined : legacyResultText(text, result, rest);
  return cut === undefined ? { result: rest } : { result: rest, resultText: cut };
}
