import { createServer } from 'node:http';

/**
 * An OTLP/HTTP traces endpoint in the bench process that takes every export and drops it: what a
 * gateway with `mcp.tracing` exports to when its own cost is measured (docs/benchmarks.md,
 * "Traces"). `endpoint()` starts it on first use; `close()` stops it.
 */
export function tracingSink() {
  let server;
  return {
    async endpoint() {
      server ??= await new Promise((resolve) => {
        const s = createServer((req, res) => {
          req.resume();
          req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
        });
        s.listen(0, '127.0.0.1', () => resolve(s));
      });
      return `http://127.0.0.1:${server.address().port}/v1/traces`;
    },
    close() {
      server?.close();
    },
  };
}
