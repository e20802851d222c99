import { MAX_LOGGED_CAUSE_CHARS, problemText } from './manifest-errors';

describe('problemText: a cause quotes the answer, so the log cuts it short', () => {
  it('writes a short cause whole', () => {
    expect(
      problemText({ type: 'InputSchemaError', detail: 'tools[0]: bad', cause: '$schema x' }),
    ).toBe('tools[0]: bad ($schema x)');
    expect(problemText({ type: 'InputSchemaError', detail: 'tools[0]: bad' })).toBe(
      'tools[0]: bad',
    );
  });

  it('writes the first MAX_LOGGED_CAUSE_CHARS characters of a long one and its length', () => {
    const cause = `$schema ${'s'.repeat(300_000)}`;
    const text = problemText({ type: 'InputSchemaError', detail: 'd', cause });
    expect(text).toBe(
      `d (${cause.slice(0, MAX_LOGGED_CAUSE_CHARS)}… (${cause.length} characters))`,
    );
  });
});
