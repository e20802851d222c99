import type { IncomingMessage } from 'node:http';
import { ChunkList } from '@app/http-body';
import { MCP_MAX_BODY_BYTES } from '@app/wire';

/** A body the listener will not read or could not read, with the status it is answered with. */
export class UnreadBody extends Error {
  constructor(
    message: string,
    readonly statusCode: number,
    readonly code?: unknown,
  ) {
    super(message);
  }
}

/**
 * Reads a request body on either /mcp listener (McpHttpServer, and fastify's content-type parser
 * in mcp-fastify.ts). Its chunks are kept in a ChunkList, so a body sent one byte per chunk costs
 * about what its bytes do (fastify's own `parseAs: 'buffer'` keeps each chunk as a Buffer of its
 * own, ~100 bytes a byte). A body declared or grown over MCP_MAX_BODY_BYTES ends as UnreadBody
 * 413 with the rest of it unread (the listener answers it with refuseTooLarge); a body cut off by
 * the client ends as UnreadBody 400 with the stream's error code (the client went away).
 */
export function readMcpBody(
  payload: IncomingMessage,
  done: (error: UnreadBody | null, body?: Buffer) => void,
): void {
  if (Number(payload.headers['content-length']) > MCP_MAX_BODY_BYTES) {
    done(new UnreadBody('body too large', 413));
    return;
  }
  const chunks = new ChunkList();
  const stop = (): void => {
    payload.removeListener('data', onData);
    payload.removeListener('end', onEnd);
    payload.removeListener('error', onError);
  };
  const onData = (chunk: Buffer): void => {
    if (chunks.length + chunk.length > MCP_MAX_BODY_BYTES) {
      stop();
      done(new UnreadBody('body too large', 413));
      return;
    }
    chunks.add(chunk);
  };
  const onEnd = (): void => {
    stop();
    done(null, chunks.bytes());
  };
  const onError = (err: Error): void => {
    stop();
    done(new UnreadBody(err.message, 400, (err as { code?: unknown }).code));
  };
  payload.on('data', onData);
  payload.on('end', onEnd);
  payload.on('error', onError);
  payload.resume();
}
