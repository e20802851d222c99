/** A Content-Type split into what the gateway reads from it. */
export interface MediaType {
  /** `type/subtype`, lower-cased, without parameters ('' when the header is absent or empty). */
  readonly essence: string;
  /** The `charset` parameter, lower-cased and unquoted; undefined when absent. */
  readonly charset?: string;
}

/**
 * Parses a Content-Type value (RFC 9110 §8.3.1: `type/subtype *( ; name=value )`, names
 * case-insensitive, values possibly quoted). Never throws; a malformed parameter is skipped.
 */
export function parseMediaType(contentType: string): MediaType {
  const parts = contentType.split(';');
  const essence = (parts[0] ?? '').trim().toLowerCase();
  for (let i = 1; i < parts.length; i++) {
    const param = parts[i] as string;
    const eq = param.indexOf('=');
    if (eq < 0 || param.slice(0, eq).trim().toLowerCase() !== 'charset') continue;
    let value = param.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
      value = value.slice(1, -1);
    }
    return { essence, charset: value.toLowerCase() };
  }
  return { essence };
}

/** `application/json` and every `+json` type (RFC 6839): UTF-8 always, whatever charset says (RFC 8259 §8.1, §11). */
export function isJsonEssence(essence: string): boolean {
  return essence === 'application/json' || essence.endsWith('+json');
}

/** Whether a Content-Type value names JSON (`application/json` or `+json`), parameters ignored. */
export function isJsonContentType(contentType: string): boolean {
  return isJsonEssence(contentType.split(';', 1)[0]?.trim().toLowerCase() ?? '');
}
