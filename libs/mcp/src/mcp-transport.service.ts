import { Injectable } from '@nestjs/common';
import { LegacyCodec } from './codecs/legacy.codec';
import { GatewayErrorCode } from './errors/gateway-error';
import { legacyWireError } from './errors/wire-errors';
import {
  errorEnvelope,
  header,
  messageAnswer,
  negotiateFormat,
  type HttpAnswer,
  type HttpExchange,
} from './http/http-answer';
import { parseMessage } from './jsonrpc/parse-message';

function transportError(
  code: GatewayErrorCode,
  message: string,
  extraHeaders: Record<string, string> = {},
): HttpAnswer {
  const wire = legacyWireError(code);
  return messageAnswer(
    wire.httpStatus,
    errorEnvelope(null, wire.code, message),
    'json',
    extraHeaders,
  );
}

/**
 * Streamable HTTP on /mcp: checks what every POST must satisfy whatever its era (media
 * types), classifies the body, and hands it to the codec of its protocol era. Only the
 * 2025 era (LegacyCodec) exists so far; a request that claims 2026-07-28 is answered by
 * the legacy rules (400 unsupported version, or -32601), which 2026 clients read as "fall
 * back to initialize" (wire notes §1.3, G-12). The 2026 codec plugs in here, beside it,
 * around the same method handlers.
 */
@Injectable()
export class McpTransport {
  constructor(private readonly legacy: LegacyCodec) {}

  async post(exchange: HttpExchange): Promise<HttpAnswer> {
    const contentType = header(exchange.headers, 'content-type')
      ?.split(';', 1)[0]
      ?.trim()
      .toLowerCase();
    if (contentType !== 'application/json') {
      return transportError(
        GatewayErrorCode.UnsupportedMediaType,
        'Unsupported Media Type: Content-Type must be application/json',
      );
    }
    const format = negotiateFormat(header(exchange.headers, 'accept'));
    if (format === undefined) {
      return transportError(
        GatewayErrorCode.NotAcceptable,
        'Not Acceptable: the client must accept application/json or text/event-stream',
      );
    }
    const { message } = parseMessage(exchange.body);
    return this.legacy.handle(exchange, message, format);
  }

  /** GET (standalone SSE stream) and DELETE (end session) are not offered: 405 (2025 transport). */
  methodNotAllowed(): HttpAnswer {
    return transportError(GatewayErrorCode.MethodNotAllowed, 'Method Not Allowed: use POST', {
      allow: 'POST',
    });
  }
}
