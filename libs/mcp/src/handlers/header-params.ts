import type { CatalogTool } from '@app/registry';
import type { IncomingHeaders } from '@app/execution';
import { header as headerValue } from '../answers/http-answer';
import { decodeHeaderValue, encodeHeaderValue } from '@app/wire';
import type { HeaderMismatch } from '../methods/method-handler';

/** A tool argument mirrored into a request header: `"x-mcp-header": "Region"` → `Mcp-Param-Region`. */
export interface HeaderParam {
  /** The argument's name: its `properties` keys from the root, dotted (`filter.region`). */
  readonly argument: string;
  /** The same as a path of keys into `arguments`. */
  readonly path: readonly string[];
  /** The header name as the schema spells it after `Mcp-Param-` (header names compare case-insensitively). */
  readonly name: string;
}

const NONE: readonly HeaderParam[] = [];
/** Per catalog tool (a new catalog brings new tool objects): parsed once, on first call. */
const cache = new WeakMap<CatalogTool, readonly HeaderParam[]>();

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The arguments of a tool that must be mirrored in `Mcp-Param-{Name}` headers: the top-level
 * `inputSchema.properties` entries carrying a string `x-mcp-header` (wire notes §1.2, §9.2;
 * SEP-2243). Parsed from the published JSON once per catalog tool; most tools have none and
 * are recognised without parsing.
 */
export function headerParamsOf(tool: CatalogTool): readonly HeaderParam[] {
  const known = cache.get(tool);
  if (known !== undefined) return known;
  let found: readonly HeaderParam[] = NONE;
  if (tool.publishedJson.includes('"x-mcp-header"')) {
    const parsed: unknown = JSON.parse(tool.publishedJson);
    const schema = isRecord(parsed) ? parsed.inputSchema : undefined;
    const properties = isRecord(schema) ? schema.properties : undefined;
    if (isRecord(properties)) found = collect(properties, []);
  }
  cache.set(tool, found);
  return found;
}

/** x-mcp-header annotations reachable through plain `properties` chains (wire notes §2.3). */
function collect(properties: Record<string, unknown>, prefix: readonly string[]): HeaderParam[] {
  return Object.entries(properties).flatMap(([key, property]) => {
    if (!isRecord(property)) return [];
    const path = [...prefix, key];
    const name = property['x-mcp-header'];
    const own: HeaderParam[] =
      typeof name === 'string' && name !== '' ? [{ argument: path.join('.'), path, name }] : [];
    return isRecord(property.properties) ? [...own, ...collect(property.properties, path)] : own;
  });
}

/** The value at a path of keys into the arguments; undefined where the path breaks off. */
function valueAt(args: Record<string, unknown>, path: readonly string[]): unknown {
  let at: unknown = args;
  for (const key of path) {
    if (!isRecord(at)) return undefined;
    at = at[key];
  }
  return at;
}

/** How an argument value is written in its header, before any base64 sentinel (SEP-2243). */
function bodyText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Whether a decoded header value states this argument value (numbers numerically: `42.0` is 42). */
function sameValue(decoded: string, value: unknown): boolean {
  if (typeof value === 'string') return decoded === value;
  if (typeof value === 'boolean') return decoded === String(value);
  if (typeof value === 'number')
    return /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(decoded) && Number(decoded) === value;
  return false;
}

/**
 * The first `Mcp-Param-*` header of a tools/call that is absent, malformed or different from
 * its argument, or present for an argument the body does not carry (all 400 -32020, wire notes
 * §1.2): an argument present and non-null needs its header, whose value (base64 sentinel
 * decoded, canonical padded base64 only) must equal the argument; a null or absent argument
 * must not have one. undefined when the headers agree with the body.
 */
export function paramHeaderMismatch(
  tool: CatalogTool,
  args: unknown,
  headers: IncomingHeaders,
): HeaderMismatch | undefined {
  const params = headerParamsOf(tool);
  if (params.length === 0) return undefined;
  const values = isRecord(args) ? args : {};
  for (const { argument, path, name } of params) {
    const header = `Mcp-Param-${name}`;
    const stated = headerValue(headers, header.toLowerCase());
    const value = valueAt(values, path);
    if (value === undefined || value === null) {
      if (stated !== undefined)
        return {
          header,
          body: '',
          reason: `${header} is present but the body carries no ${argument}`,
        };
      continue;
    }
    const body = bodyText(value);
    if (stated === undefined)
      return {
        header,
        body,
        reason: `the body carries ${argument} but the ${header} header is absent`,
      };
    const decoded = decodeHeaderValue(stated);
    if (decoded === undefined)
      return { header, body, reason: `invalid Base64 sentinel in ${header}` };
    if (!sameValue(decoded, value))
      return { header, body, reason: `${header} differs from arguments.${argument}` };
  }
  return undefined;
}

/**
 * The `Mcp-Param-*` headers a tools/call to an upstream carries: the caller's own
 * `Mcp-Param-*` headers as sent (unknown ones MUST be forwarded, wire notes G-2), then one for
 * each of this tool's `x-mcp-header` arguments present in `args`, encoded (base64 sentinel
 * where needed), so a 2026 upstream gets them from a 2025 caller too (G-25). undefined when
 * there are none.
 */
export function paramHeadersFor(
  tool: CatalogTool,
  args: unknown,
  incoming: IncomingHeaders = {},
): Readonly<Record<string, string>> | undefined {
  const out: Record<string, string> = {};
  for (const name of Object.keys(incoming)) {
    const value = name.startsWith('mcp-param-') ? headerValue(incoming, name) : undefined;
    if (value !== undefined) out[name] = value;
  }
  const values = isRecord(args) ? args : {};
  for (const { path, name } of headerParamsOf(tool)) {
    const value = valueAt(values, path);
    if (value === undefined || value === null || typeof value === 'object') continue;
    out[`mcp-param-${name.toLowerCase()}`] = encodeHeaderValue(bodyText(value));
  }
  return Object.keys(out).length === 0 ? undefined : out;
}
