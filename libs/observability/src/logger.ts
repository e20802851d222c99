import type { LoggerService } from '@nestjs/common';
import pino, { type Logger as PinoLogger } from 'pino';

/**
 * Header names whose values must never reach a log line (contract §10: the employee numbers
 * are encrypted for the Tool Service and the gateway may not log them; Authorization is a
 * credential). The gateway never logs request headers; these paths are the second line.
 */
export const REDACTED_HEADERS = [
  'authorization',
  'employee-no',
  'virtual-employee-no',
  'cookie',
] as const;

const redactPaths = REDACTED_HEADERS.flatMap((h) => [
  `headers["${h}"]`,
  `*.headers["${h}"]`,
  `req.headers["${h}"]`,
]);

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
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: redactPaths, censor: '[redacted]' },
    },
    destination,
  );
}

/**
 * A logger for lines the gateway builds from known scalar fields only (the audit line of
 * issue 12 §5): the root logger's format on stdout, without the redaction paths. Redaction
 * walks every top-level key of every line for its wildcard paths (about 11 µs a line) and
 * such a line never holds a header map or a request body to redact. `context` is set on every
 * line, as Nest's Logger would.
 */
export function createFieldLogger(
  level: string,
  context: string,
  destination?: pino.DestinationStream,
): PinoLogger {
  return pino(
    {
      level,
      base: { service: 'mcp-gateway', context },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
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
