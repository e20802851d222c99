import { readFileSync } from 'node:fs';

/** Descriptors kept for everything but /mcp clients: management, pulls, Redis, files, logs. */
const RESERVED_DESCRIPTORS = 512;
/** Without a readable limit (not Linux), this many /mcp connections. */
const FALLBACK_CONNECTIONS = 10_000;

/**
 * The soft open-file limit of this process, from /proc/self/limits ("Max open files"), or
 * undefined where it cannot be read or is unlimited.
 */
export function openFileLimit(
  read: () => string = () => readFileSync('/proc/self/limits', 'utf8'),
): number | undefined {
  try {
    const line = read()
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
    const n = Number(soft);
    return Number.isInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The default `mcp.http.maxConnections`: every /mcp client may need a connection to a Tool
 * Service as well, so half of the descriptors left after RESERVED_DESCRIPTORS, between 64 and
 * 100000: 20,000 half-open requests must not starve liveness and pulls (docs/operations.md §1,
 * `http.maxConnections`).
 * @param fileLimit the process's open-file limit (undefined: unknown)
 */
export function defaultMaxConnections(fileLimit: number | undefined): number {
  if (fileLimit === undefined) return FALLBACK_CONNECTIONS;
  return Math.min(100_000, Math.max(64, Math.floor((fileLimit - RESERVED_DESCRIPTORS) / 2)));
}
