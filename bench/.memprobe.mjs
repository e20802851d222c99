import { startToolService, killAll } from './lib/processes.mjs';
import { startGatewayFor } from './lib/scenario-tools-list.mjs';
import { readFileSync } from 'node:fs';
const ts = await startToolService({});
const extra = process.env.PROBE_ENV ? { env: Object.fromEntries(process.env.PROBE_ENV.split(' ').map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)])) } : {};
const { gw } = await startGatewayFor(ts, 't10', 10, extra);
await new Promise((r) => setTimeout(r, Number(process.env.PROBE_WAIT ?? 1000)));
const smaps = readFileSync(`/proc/${gw.pid}/smaps`, 'utf8');
const by = new Map();
let cur = null;
for (const line of smaps.split('\n')) {
  const m = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
  if (m) { cur = m[1] || '[anon]'; continue; }
  const r = /^Rss:\s+(\d+)/.exec(line);
  if (r && cur) by.set(cur, (by.get(cur) ?? 0) + Number(r[1]));
}
const rows = [...by].sort((a, b) => b[1] - a[1]).slice(0, 12);
const total = [...by.values()].reduce((a, b) => a + b, 0);
console.log('total RSS MB', (total / 1024).toFixed(1));
for (const [k, v] of rows) console.log((v / 1024).toFixed(1).padStart(8), k);
console.log(readFileSync(`/proc/${gw.pid}/smaps_rollup`, 'utf8').split('\n').filter((l) => /Rss|Anon|File/.test(l)).join('\n'));
if (process.env.PROBE_KEEP) { console.log('pid', gw.pid, gw.managementUrl); await new Promise((r) => setTimeout(r, 600000)); }
killAll();
process.exit(0);
