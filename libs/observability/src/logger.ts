import type { LoggerService } from '@nestjs/common';
import pino, { type Logger as PinoLogger } from 'pino';
import { CREDENTIAL_HEADERS, PERSONAL_CALLER_HEADERS } from '@app/wire';

/**
 * Header names whose values must never reach a log line (contract §10: the employee numbers
 * are encrypted for the Tool Service and the gateway may not log them; Authorization, its proxy
 * form and Cookie are credentials). The gateway never logs request headers; these paths are the
 * second line. The same lists keep these headers from a runtime registration's forwardHeaders
 * (libs/config/src/upstream-rules.ts), so a name added here is refused there too.
 */
export const REDACTED_HEADERS: readonly string[] = [
  ...CREDENTIAL_HEADERS,
  ...PERSONAL_CALLER_HEADERS,
];

const redactPaths = REDACTED_HEADERS.flatMap((h) => [
  `headers["${h}"]`,
  `*.headers["${h}"]`,
  `req.headers["${h}"]`,
]);

/** Bytes a write to stdout collects before it is made (at most a pipe's atomic write). */
const STDOUT_BATCH_BYTES = 4096;
/** Longest a logged line waits in the batch, in ms. */
const STDOUT_FLUSH_MILLIS = 200;

/**
 * Lines collected for stdout, handed to pino's SonicBoom joined, in one synchronous write, once
 * they reach STDOUT_BATCH_BYTES (counted in UTF-16 units: the bytes of ASCII JSON lines).
 * SonicBoom batches too (`minLength`), but it appends each line to one string and measures the
 * whole string's UTF-8 length on every write, which flattens it: per line, a copy of the batch
 * so far (about 10k instructions of a tools/call's 350k, counted with callgrind).
 */
export class BatchedStdout implements pino.DestinationStream {
  private lines: string[] = [];
  private chars = 0;

  constructor(private readonly sink: ReturnType<typeof pino.destination>) {}

  write(line: string): void {
    this.lines.push(line);
    this.chars += line.length;
    if (this.chars >= STDOUT_BATCH_BYTES) this.flush();
  }

  /** Writes what is collected now, synchronously. Throws what the write throws (EPIPE). */
  flush(): void {
    if (this.lines.length === 0) return;
    const text = this.lines.length === 1 ? (this.lines[0] as string) : this.lines.join('');
    this.lines = [];
    this.chars = 0;
    this.sink.write(text);
  }

  /** flush, then fsync when stdout is a file. */
  flushSync(): void {
    this.flush();
    this.sink.flushSync();
  }
}

let stdout: BatchedStdout | undefined;

/**
 * The one stdout stream of every logger of the process: lines are collected up to 4 KiB and
 * written together, synchronously (as pino's default stream writes each line), and at least
 * every 200 ms, so under load one write syscall carries many lines (the audit line of every
 * tools/call cost a syscall of its own before: about a tenth of a call's CPU). One writer, so
 * lines of different loggers never interleave. What is collected is written when the process
 * exits (also on process.exit and an uncaught exception); a SIGKILL loses at most the last
 * 200 ms.
 */
function sharedStdout(): BatchedStdout {
  if (stdout === undefined) {
    stdout = new BatchedStdout(pino.destination({ dest: 1, sync: true }));
    setInterval(writeCollected, STDOUT_FLUSH_MILLIS).unref();
    process.on('exit', flushLogs);
  }
  return stdout;
}

/**
 * The 200 ms timer's write: what is collected goes out (synchronously) without the fsync that
 * flushLogs' flushSync adds, which costs a disk flush every 200 ms when stdout is a file.
 * Never throws.
 */
function writeCollected(): void {
  try {
    stdout?.flush();
  } catch {
    // stdout closed (EPIPE): nothing can be written any more
  }
}

/**
 * Writes the lines collected for stdout now (after a line someone waits for, such as the
 * listening line with the bound ports, and at exit), then fsyncs a file. Never throws.
 */
export function flushLogs(): void {
  try {
    stdout?.flushSync();
  } catch {
    // stdout closed (EPIPE): nothing can be written any more
  }
}

let stampedAt = 0;
let stamp = '';

/**
 * pino's `time` field as ISO 8601 (what pino.stdTimeFunctions.isoTime writes), formatted once
 * per millisecond: at thousands of audit lines a second most lines share their millisecond.
 */
function isoTime(): string {
  const now = Date.now();
  if (now !== stampedAt) {
    stampedAt = now;
    stamp = `,"time":"${new Date(now).toISOString()}"`;
  }
  return stamp;
}

/** The longest text of a caller's (a header, a token claim) a log or audit line copies. */
export const MAX_LOGGED_CALLER_TEXT = 128;

/**
 * A caller's header (its first value) or claim as a log line copies it: at most
 * MAX_LOGGED_CALLER_TEXT characters, so no caller sets the size of the lines about its calls
 * (docs/operations.md §4 "Calls", §14 "Audit"). undefined when absent.
 */
export function loggedCallerText(
  value: string | readonly string[] | undefined,
): string | undefined {
  const first = typeof value === 'string' ? value : value?.[0];
  return first === undefined || first.length <= MAX_LOGGED_CALLER_TEXT
    ? first
    : first.slice(0, MAX_LOGGED_CALLER_TEXT);
}

/**
 * The process logger: JSON lines on stdout (pino), level from LOG_LEVEL (default info). Lines
 * about an agent's call carry its `requestId` and `guid` as fields, passed explicitly: no
 * per-request async context on the hot path.
 */
export function createRootLogger(level: string, destination?: pino.DestinationStream): PinoLogger {
  return pino(
    {
      level,
      base: { service: 'mcp-gateway' },
      timestamp: isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: redactPaths, censor: '[redacted]' },
    },
    destination ?? sharedStdout(),
  );
}

/**
 * A writer of info lines that the caller builds as JSON text, for the one line on every call's
 * path (the audit line, docs/operations.md §14 "Audit"): `write(members)` writes
 * `{"level":"info","time":…,"service":"mcp-gateway","context":<context>,<members>}` on the
 * shared stdout stream, the format of the root logger's lines, without pino's serializer
 * (about half the cost of a pino line). `members` must be valid JSON object members, every
 * value encoded by the caller (JSON.stringify). A no-op when `level` (LOG_LEVEL) is above info.
 */
export function createJsonLineWriter(
  level: string,
  context: string,
  destination?: pino.DestinationStream,
): (members: string) => void {
  const info = pino.levels.values.info!;
  // 'silent' has no number: above every level
  const threshold = level === 'silent' ? Infinity : (pino.levels.values[level] ?? info);
  if (threshold > info) return () => undefined;
  const out = destination ?? sharedStdout();
  const prefix = `{"level":"info"`;
  const base = `,"service":"mcp-gateway","context":${JSON.stringify(context)},`;
  return (members) => {
    out.write(`${prefix}${isoTime()}${base}${members}}\n`);
  };
}

type Fields = Record<string, unknown>;

/** Nest's LoggerService on pino, so framework and gateway lines share one JSON format. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: PinoLogger) {}

  log(message: unknown, ...rest: unknown[]): void {
    this.write('info', message, rest);
  }

  error(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest);
  }

  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }

  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }

  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, rest);
  }

  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }

  /** Nest passes the context (class name) as the last string argument, and a stack before it for errors. */
  private write(level: pino.Level, message: unknown, rest: unknown[]): void {
    if (!this.logger.isLevelEnabled(level)) return;
    const fields: Fields = {};
    const args = [...rest];
    if (typeof args[args.length - 1] === 'string') fields.context = args.pop();
    if (level === 'error' && typeof args[0] === 'string' && args[0].includes('\n'))
      fields.stack = args.shift();
    if (message instanceof Error) {
      this.logger[level]({ ...fields, err: message }, message.message);
    } else if (typeof message === 'object' && message !== null) {
      this.logger[level]({ ...fields, ...(message as Fields) });
    } else {
      this.logger[level](fields, String(message));
    }
  }
}
