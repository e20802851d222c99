import { createJsonLineWriter } from './logger';

/** A destination that keeps what it is given. */
function collector(): { lines: string[]; write: (text: string) => void } {
  const lines: string[] = [];
  return { lines, write: (text) => void lines.push(text) };
}

describe('createJsonLineWriter (the audit line, issue 12 §5)', () => {
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
