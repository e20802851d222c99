import type { FastifyInstance } from 'fastify';

/** Request bodies above this are refused with 413 (the official SDKs' limit; wire notes G-31). */
export const MCP_MAX_BODY_BYTES = 4 * 1024 * 1024;

/**
 * Makes every request body a raw Buffer (any Content-Type), so the transport decides about
 * media types and JSON itself and answers in JSON-RPC terms rather than the framework's.
 */
export function installRawBodyParser(fastify: FastifyInstance): void {
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser(
    '*',
    { parseAs: 'buffer', bodyLimit: MCP_MAX_BODY_BYTES },
    (_req, body, done) => {
      done(null, body);
    },
  );
}
