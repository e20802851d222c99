// The bench's own Tool Service: small and fast on purpose, so that what the bench measures
// is the gateway (or the proxy) in front of it, not the upstream.
//
//   GET  /tool-manifest?catalog=<key>  the manifest of catalog <key> (bytes serialized once)
//   POST /mcp/<toolName>               echo: parses the JSON arguments, answers them as JSON
//   POST /__bench/catalog              {key, tools, revision, variant}: (re)builds a catalog
//
// Run as its own process (`node bench/lib/tool-service.mjs`); it prints `listening <port>`.
// Only 127.0.0.1 is ever bound.
import { createServer } from 'node:http';

const catalogs = new Map(); // key -> Buffer (the manifest JSON)

/**
 * A manifest of `tools` tools: bench.echo plus tools-1 generated ones. Every generated tool has
 * its own inputSchema (as real catalogs do), so a first load compiles one schema per tool;
 * `variant` changes every description (and the revision), which is what a catalog swap is.
 */
export function buildManifest(tools, revision, variant) {
  const list = [
    {
      name: 'bench.echo',
      description: `Echoes its JSON arguments back (${variant}).`,
      inputSchema: { type: 'object', properties: { nonce: { type: 'integer' } } },
      _meta: { version: '1' },
    },
  ];
  for (let i = 1; i < tools; i++) {
    const n = String(i).padStart(5, '0');
    list.push({
      name: `bench.tool-${n}`,
      description: `Looks up record set ${n} of the bench domain and returns the matching rows (${variant}).`,
      inputSchema: {
        type: 'object',
        properties: {
          [`query_${i}`]: {
            type: 'string',
            maxLength: 200,
            description: `Free-text filter for set ${n}`,
          },
          limit: { type: 'integer', minimum: 1, maximum: 100 + (i % 50) },
        },
        required: [`query_${i}`],
      },
      _meta: { version: String(1 + (i % 3)) },
    });
  }
  return { bundleId: 'bench', revision, tools: list };
}

function setCatalog({ key, tools, revision, variant }) {
  const bytes = Buffer.from(JSON.stringify(buildManifest(tools, revision, variant ?? revision)));
  catalogs.set(key, bytes);
  return bytes.length;
}

function readBody(req, done) {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => done(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
}

const server = createServer((req, res) => {
  const url = req.url ?? '/';
  if (req.method === 'POST' && url.startsWith('/mcp/')) {
    readBody(req, (body) => {
      let args;
      try {
        args = JSON.parse(body.toString('utf8') || '{}');
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"bad json"}');
        return;
      }
      const out = JSON.stringify(args);
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(out),
      });
      res.end(out);
    });
    return;
  }
  if (req.method === 'GET' && url.startsWith('/tool-manifest')) {
    const key = new URL(url, 'http://x').searchParams.get('catalog') ?? 'default';
    const bytes = catalogs.get(key);
    if (!bytes) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': bytes.length });
    res.end(bytes);
    return;
  }
  if (req.method === 'POST' && url === '/__bench/catalog') {
    readBody(req, (body) => {
      const bytes = setCatalog(JSON.parse(body.toString('utf8')));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ bytes }));
    });
    return;
  }
  res.writeHead(404).end();
});
server.keepAliveTimeout = 65_000;

setCatalog({ key: 'default', tools: 1, revision: 'r1' });
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)) && server.closeAllConnections());
