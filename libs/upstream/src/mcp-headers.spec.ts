import { encodeHeaderValue, mcpNameHeader } from './mcp-headers';

describe('encodeHeaderValue (2026 base64 sentinel)', () => {
  it('passes safe plain ASCII through', () => {
    expect(encodeHeaderValue('echo')).toBe('echo');
    expect(encodeHeaderValue('add.numbers')).toBe('add.numbers');
    expect(encodeHeaderValue('config://app?x=1 y')).toBe('config://app?x=1 y');
    expect(encodeHeaderValue('a\tb')).toBe('a\tb');
  });

  it('encodes non-ASCII and surrounding whitespace, canonical padded base64 (capture W-sql)', () => {
    expect(encodeHeaderValue('Zürich ')).toBe('=?base64?WsO8cmljaCA=?=');
    expect(encodeHeaderValue(' x')).toBe(`=?base64?${Buffer.from(' x').toString('base64')}?=`);
    expect(encodeHeaderValue('echo')).not.toContain('=?base64?');
    expect(encodeHeaderValue('ech')).toBe('ech');
  });

  it('encodes control characters, the empty value, and values that look like the sentinel', () => {
    expect(encodeHeaderValue('a\nb')).toBe(`=?base64?${Buffer.from('a\nb').toString('base64')}?=`);
    expect(encodeHeaderValue('')).toBe('=?base64??=');
    expect(encodeHeaderValue('=?base64?ZWNobw==?=')).toBe(
      `=?base64?${Buffer.from('=?base64?ZWNobw==?=').toString('base64')}?=`,
    );
  });
});

describe('mcpNameHeader', () => {
  it('mirrors params.name, params.uri or params.taskId per method', () => {
    expect(mcpNameHeader('tools/call', { name: 'echo' })).toBe('echo');
    expect(mcpNameHeader('prompts/get', { name: 'review' })).toBe('review');
    expect(mcpNameHeader('resources/read', { uri: 'config://app' })).toBe('config://app');
    expect(mcpNameHeader('tasks/get', { taskId: 't-1' })).toBe('t-1');
    expect(mcpNameHeader('tools/call', { name: 'größe' })).toBe(
      `=?base64?${Buffer.from('größe').toString('base64')}?=`,
    );
  });

  it('is absent for other methods and for a missing or non-string field', () => {
    expect(mcpNameHeader('tools/list', { name: 'x' })).toBeUndefined();
    expect(mcpNameHeader('tools/call', undefined)).toBeUndefined();
    expect(mcpNameHeader('tools/call', { name: 42 })).toBeUndefined();
  });
});
