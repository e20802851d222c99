/**
 * Removes insignificant whitespace from JSON text that is already known to be valid, without
 * parsing it into values: key order, number spelling (big integers, 1.0, 1e3) and escape
 * sequences stay exactly as the Tool Service wrote them (contract §10: "compact JSON").
 */
export function compactJson(validJson: string): string {
  // Fast path: nothing to strip outside strings is common for machine-written JSON.
  if (!/[\s]/.test(validJson)) return validJson;
  let out = '';
  let runStart = 0;
  let inString = false;
  for (let i = 0; i < validJson.length; i++) {
    const c = validJson.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) {
      inString = true;
    } else if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
      out += validJson.slice(runStart, i);
      runStart = i + 1;
    }
  }
  return out + validJson.slice(runStart);
}
