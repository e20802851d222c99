import { increasingProgress } from './increasing-progress';

const progress = (value: unknown, total?: number): object => ({
  jsonrpc: '2.0',
  method: 'notifications/progress',
  params: { progressToken: 't', progress: value, ...(total === undefined ? {} : { total }) },
});

describe('increasingProgress', () => {
  it('passes progress while it increases and drops a value that does not (a later round starting again)', () => {
    const sent: object[] = [];
    const relay = increasingProgress((m) => sent.push(m));
    for (const value of [1, 2, 2, 1, 3, 0.5, 4]) relay(progress(value, 10));
    expect(sent.map((m) => (m as { params: { progress: number } }).params.progress)).toEqual([
      1, 2, 3, 4,
    ]);
  });

  it('passes every other message untouched, in order', () => {
    const sent: object[] = [];
    const relay = increasingProgress((m) => sent.push(m));
    const log = { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info' } };
    const request = { jsonrpc: '2.0', id: 'r', method: 'elicitation/create', params: {} };
    relay(progress(5));
    relay(log);
    relay(progress(5));
    relay(request);
    relay(progress('not a number'));
    expect(sent).toEqual([progress(5), log, request, progress('not a number')]);
  });
});
