import safeRegex from 'safe-regex2';

/**
 * The first regular expression in a JSON Schema that may take exponential time to match
 * (`pattern` values and `patternProperties` keys, anywhere in the schema), or undefined.
 * The gateway runs an outputSchema on every answer of its tool, on the event loop: a pattern
 * such as `^(a+)+$` would let one answer of a few dozen characters stall every caller. Checked
 * with safe-regex2 (star height), as fastify checks its route patterns.
 */
export function firstUnsafePattern(schema: unknown): string | undefined {
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const node = stack.pop();
    if (Array.isArray(node)) {
      stack.push(...(node as unknown[]));
      continue;
    }
    if (typeof node !== 'object' || node === null) continue;
    const record = node as Record<string, unknown>;
    if (typeof record.pattern === 'string' && !isSafe(record.pattern)) return record.pattern;
    const patternProperties = record.patternProperties;
    if (typeof patternProperties === 'object' && patternProperties !== null) {
      for (const key of Object.keys(patternProperties)) if (!isSafe(key)) return key;
    }
    for (const value of Object.values(record)) if (typeof value === 'object') stack.push(value);
  }
  return undefined;
}

function isSafe(pattern: string): boolean {
  try {
    return safeRegex(pattern);
  } catch {
    return true; // not a valid RegExp: the schema compiler reports it
  }
}
