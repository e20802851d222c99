import type pino from 'pino';
import { BatchedStdout, createJsonLineWriter, loggedCallerText } from './logger';

/** A destination that keeps what it is given. */
function collector(): { lines: string[]; write: (text: string) => void } {
  const lines: string[] = [];
  return { lines, write: (text) => void lines.push(text) };
}

describe('createJsonLineWriter (the audit line, docs/operations.md §14 "Audit")', () => {
  it('writes one JSON line: level, time, service and context first, then the members', () => {
    const out = collector();
    const write = createJsonLineWriter('info', 'Audit', out);
    write('"msg":"audit tools/call","tool":"a\\"b","n":1.5,"x":null');
    expect(out.lines).toHaveLength(1);
    expect(out.lines[0]?.endsWith('}\n')).toBe(true);
    const line = JSON.parse(out.lines[0]!) as Record<string, unknown>;
    expect(line).toEqual({
      level: 'info',
      time: expect.any(String),
      service: 'mcp-gateway',
      context: 'Audit',
      msg: 'audit tools/call',
      tool: 'a"b',
      n: 1.5,
      x: null,
    });
    expect(Number.isNaN(Date.parse(line.time as string))).toBe(false);
  });

  it.each(['trace', 'debug', 'info'])('writes at LOG_LEVEL %s', (level) => {
    const out = collector();
    createJsonLineWriter(level, 'Audit', out)('"msg":"x"');
    expect(out.lines).toHaveLength(1);
  });

  it.each(['warn', 'error', 'fatal', 'silent'])('writes nothing at LOG_LEVEL %s', (level) => {
    const out = collector();
    createJsonLineWriter(level, 'Audit', out)('"msg":"x"');
    expect(out.lines).toHaveLength(0);
  });
});

describe('BatchedStdout (the shared stdout of every logger)', () => {
  /** A SonicBoom stand-in that records each write and flushSync. */
  function sink(): { writes: string[]; syncs: number; boom: ReturnType<typeof pino.destination> } {
    const state = { writes: [] as string[], syncs: 0 };
    const boom = {
      write: (text: string) => void state.writes.push(text),
      flushSync: () => void state.syncs++,
    } as unknown as ReturnType<typeof pino.destination>;
    return {
      get writes() {
        return state.writes;
      },
      get syncs() {
        return state.syncs;
      },
      boom,
    };
  }

  it('holds lines until 4096 characters are collected, then writes them joined, in order', () => {
    const s = sink();
    const out = new BatchedStdout(s.boom);
    const line = (n: number): string => `{"n":${n},"pad":"${'x'.repeat(90)}"}\n`;
    let written = '';
    for (let n = 0; n < 100; n++) {
      out.write(line(n));
      written += line(n);
    }
    expect(s.writes.length).toBe(Math.floor(written.length / 4096));
    for (const text of s.writes) expect(text.length).toBeGreaterThanOrEqual(4096);
    out.flush();
    expect(s.writes.join('')).toBe(written);
    out.flush();
    expect(s.writes.join('')).toBe(written);
  });

  it('flushSync writes what is collected, then asks the sink to sync', () => {
    const s = sink();
    const out = new BatchedStdout(s.boom);
    out.write('a\n');
    out.write('b\n');
    expect(s.writes).toEqual([]);
    out.flushSync();
    expect(s.writes).toEqual(['a\nb\n']);
    expect(s.syncs).toBe(1);
  });
});

describe("loggedCallerText (a caller's header or claim in a log line)", () => {
  it('keeps a short value, takes the first of repeated ones, cuts a long one to 128 characters', () => {
    expect(loggedCallerText('req-1')).toBe('req-1');
    expect(loggedCallerText(undefined)).toBeUndefined();
    expect(loggedCallerText(['first', 'second'])).toBe('first');
    expect(loggedCallerText('r'.repeat(10_000))).toBe('r'.repeat(128));
    expect(loggedCallerText(['g'.repeat(129)])).toBe('g'.repeat(128));
  });
});
