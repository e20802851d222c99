import type { CatalogTool } from '@app/registry';
import type { IncomingHeaders } from '@app/execution';
import { header as headerValue } from '../http/http-answer';
import { encodeHeaderValue } from '@app/upstream';
import { decodeHeaderValue } from '../codecs/mcp-header-values';

/** A tool argument mirrored into a request header: `"x-mcp-header": "Region"` → `Mcp-Param-Region`. */
export interface HeaderParam {
  /** The argument's name (a top-level `inputSchema.properties` key). */
  readonly argument: string;
  /** The header name as the schema spells it after `Mcp-Param-` (header names compare case-insensitively). */
  readonly name: string;
}

/** A -32020 header fault: which header, what the body says, and the reason in words. */
export interface HeaderMismatch {
  readonly header: string;
  readonly body: string;
  readonly reason: string;
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
    if (isRecord(properties))
      found = Object.entries(properties).flatMap(([argument, property]) => {
        const name = isRecord(property) ? property['x-mcp-header'] : undefined;
        return typeof name === 'string' && name !== '' ? [{ argument, name }] : [];
      });
  }
  cache.set(tool, found);
  return found;
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
  for (const { argument, name } of params) {
    const header = `Mcp-Param-${name}`;
    const stated = headerValue(headers, header.toLowerCase());
    const value = values[argument];
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
 * The `Mcp-Param-*` headers a tools/call to a 2026 upstream must carry for this tool's
 * `x-mcp-header` arguments (the upstream checks them like the gateway does), encoded (base64
 * sentinel where needed); undefined when the tool mirrors no argument present in `args`.
 */
export function paramHeadersFor(
  tool: CatalogTool,
  args: unknown,
): Readonly<Record<string, string>> | undefined {
  const params = headerParamsOf(tool);
  if (params.length === 0 || !isRecord(args)) return undefined;
  const out: Record<string, string> = {};
  for (const { argument, name } of params) {
    const value = args[argument];
    if (value === undefined || value === null || typeof value === 'object') continue;
    out[`mcp-param-${name.toLowerCase()}`] = encodeHeaderValue(bodyText(value));
  }
  return Object.keys(out).length === 0 ? undefined : out;
}
