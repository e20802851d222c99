// Reads the tools/list of real MCP servers from the npm registry once, with the official SDK's
// stdio client, and keeps them as data (bench/search/real-tools.json) for the tool-search
// retrieval benchmark (docs/benchmarks.md, "Tool search"). Not part of any test or bench run:
// the data is committed; run this again only to refresh it.
//
//   mkdir -p /tmp/mcpcollect && cd /tmp/mcpcollect && npm init -y && \
//     npm install --ignore-scripts <the packages of SERVERS below>
//   node bench/search/collect-tools.mjs /tmp/mcpcollect && npx prettier --write bench/search
//
// Each server is started without credentials (a placeholder where one insists on a value at
// start); one that does not list its tools that way is skipped and named.
import { writeFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = process.argv[2] ?? '/tmp/mcpcollect';
const scratch = mkdtempSync(join(tmpdir(), 'mcp-collect-'));
const PLACEHOLDER = 'placeholder-not-a-real-credential';

/** [server id, package, args, env] — the package's bin is resolved from its package.json. */
const SERVERS = [
  ['everything', '@modelcontextprotocol/server-everything', ['stdio'], {}],
  ['filesystem', '@modelcontextprotocol/server-filesystem', [scratch], {}],
  [
    'memory',
    '@modelcontextprotocol/server-memory',
    [],
    { MEMORY_FILE_PATH: join(scratch, 'm.json') },
  ],
  [
    'github',
    '@modelcontextprotocol/server-github',
    [],
    { GITHUB_PERSONAL_ACCESS_TOKEN: PLACEHOLDER },
  ],
  ['postgres', '@modelcontextprotocol/server-postgres', ['postgresql://127.0.0.1:1/none'], {}],
  [
    'slack',
    '@modelcontextprotocol/server-slack',
    [],
    { SLACK_BOT_TOKEN: PLACEHOLDER, SLACK_TEAM_ID: 'T0' },
  ],
  ['puppeteer', '@modelcontextprotocol/server-puppeteer', [], {}],
  ['sequential-thinking', '@modelcontextprotocol/server-sequential-thinking', [], {}],
  ['playwright', '@playwright/mcp', ['--headless'], {}],
  ['chrome-devtools', 'chrome-devtools-mcp', [], {}],
  ['notion', '@notionhq/notion-mcp-server', [], { NOTION_TOKEN: PLACEHOLDER }],
  ['supabase', '@supabase/mcp-server-supabase', ['--access-token', PLACEHOLDER], {}],
  ['mongodb', 'mongodb-mcp-server', [], {}],
  ['azure-devops', '@azure-devops/mcp', ['placeholder-org'], {}],
  ['sentry', '@sentry/mcp-server', ['--access-token', PLACEHOLDER], {}],
  ['firecrawl', 'firecrawl-mcp', [], { FIRECRAWL_API_KEY: `fc-${PLACEHOLDER}` }],
  ['tavily', 'tavily-mcp', [], { TAVILY_API_KEY: `tvly-${PLACEHOLDER}` }],
  ['gitlab', '@zereight/mcp-gitlab', [], { GITLAB_PERSONAL_ACCESS_TOKEN: PLACEHOLDER }],
];

function binOf(pkg) {
  for (const base of [join(root, 'node_modules'), join(here, '..', '..', 'node_modules')]) {
    try {
      const dir = join(base, pkg);
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      const bin =
        typeof manifest.bin === 'string' ? manifest.bin : Object.values(manifest.bin ?? {})[0];
      if (bin !== undefined) return { bin: join(dir, bin), version: manifest.version };
    } catch {
      // not installed there
    }
  }
  return undefined;
}

async function toolsOf([id, pkg, args, env]) {
  const found = binOf(pkg);
  if (found === undefined) throw new Error('not installed');
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [found.bin, ...args],
    env: { ...process.env, ...env },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'mcp-gateway-bench-collect', version: '1' });
  const timer = setTimeout(() => void transport.close(), 60_000);
  try {
    await client.connect(transport);
    const tools = [];
    let cursor;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return { server: id, package: pkg, version: found.version, tools };
  } finally {
    clearTimeout(timer);
    await client.close().catch(() => undefined);
  }
}

const servers = [];
for (const server of SERVERS) {
  try {
    const listed = await toolsOf(server);
    servers.push(listed);
    console.log(`${server[0]}: ${listed.tools.length} tools (${server[1]}@${listed.version})`);
  } catch (err) {
    console.log(`${server[0]}: skipped (${err instanceof Error ? err.message : String(err)})`);
  }
}
const total = servers.reduce((n, s) => n + s.tools.length, 0);
writeFileSync(
  join(here, 'real-tools.json'),
  `${JSON.stringify({ collectedAt: new Date().toISOString(), total, servers }, null, 1)}\n`,
);
console.log(
  `${total} tools from ${servers.length} servers written to bench/search/real-tools.json`,
);
process.exit(0);
