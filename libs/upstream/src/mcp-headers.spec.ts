import { mcpNameHeader } from './mcp-headers';

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
