import {
  asLegacyResult,
  hasModernResultMembers,
  legacyResultText,
  withoutModernResultMembers,
} from './legacy-result';

describe('asLegacyResult: a 2026 upstream result as a 2025 client sees it', () => {
  it('drops resultType "complete", the cache hints and the upstream serverInfo; keeps the rest', () => {
    expect(
      asLegacyResult({
        content: [{ type: 'text', text: '42' }],
        structuredContent: { sum: 42 },
        isError: false,
        resultType: 'complete',
        ttlMs: 0,
        cacheScope: 'private',
        _meta: {
          'io.modelcontextprotocol/serverInfo': { name: 'calc', version: '2.0.0' },
          'example.com/trace': 'abc',
        },
      }),
    ).toEqual({
      content: [{ type: 'text', text: '42' }],
      structuredContent: { sum: 42 },
      isError: false,
      _meta: { 'example.com/trace': 'abc' },
    });
  });

  it('leaves out a _meta that held only the serverInfo', () => {
    expect(
      asLegacyResult({
        contents: [],
        resultType: 'complete',
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'calc', version: '2' } },
      }),
    ).toEqual({ contents: [] });
  });

  it('returns a 2025 result as it is', () => {
    const result = { content: [], _meta: { progressToken: 1 } };
    expect(asLegacyResult(result)).toBe(result);
  });

  it('keeps a resultType that is not "complete"', () => {
    expect(asLegacyResult({ resultType: 'input_required', inputRequests: {} })).toEqual({
      resultType: 'input_required',
      inputRequests: {},
    });
  });
});

describe('asLegacyResult: multi round-trip members outside an input_required result', () => {
  const round = {
    inputRequests: { ask: { method: 'roots/list', params: {} } },
    requestState: 'raw-upstream-state',
  };

  it('leaves out inputRequests and requestState of a complete result, a task, or a result without resultType', () => {
    const content = [{ type: 'text', text: 'x' }];
    expect(asLegacyResult({ content, resultType: 'complete', ...round })).toEqual({ content });
    expect(asLegacyResult({ content, ...round })).toEqual({ content });
    expect(
      asLegacyResult({ resultType: 'task', task: { taskId: 't' }, ttlMs: 5, ...round }),
    ).toEqual({ resultType: 'task', task: { taskId: 't' }, ttlMs: 5 });
  });

  it('keeps them on an input_required result (multi round-trip takes those)', () => {
    const asked = { resultType: 'input_required', ...round };
    expect(asLegacyResult(asked)).toBe(asked);
  });

  it('keeps the input requests of a task (tasks/get of a task waiting for input)', () => {
    const waiting = {
      taskId: 't',
      status: 'input_required',
      inputRequests: { confirm: { method: 'elicitation/create', params: {} } },
    };
    expect(asLegacyResult(waiting, true)).toBe(waiting);
  });

  it('cuts them from a tasks/result answer (a result, not a task)', () => {
    expect(asLegacyResult({ content: [], ...round }, true)).toEqual({ content: [] });
  });

  it("cuts them from a finished task's result inlined in a tasks/* answer, and its text is then serialized", () => {
    const answer = {
      taskId: 't',
      status: 'completed',
      ttlMs: 60_000,
      result: { content: [], resultType: 'complete', ...round },
    };
    const legacy = asLegacyResult(answer, true);
    expect(legacy).toEqual({
      taskId: 't',
      status: 'completed',
      ttlMs: 60_000,
      result: { content: [], resultType: 'complete' },
    });
    expect(legacyResultText(JSON.stringify(answer), answer, legacy)).toBeUndefined();
  });

  it('cuts them from the text of a result as the upstream wrote it', () => {
    const text =
      '{"content":[],"resultType":"complete","inputRequests":{"a":1},"requestState":"s"}';
    const result = JSON.parse(text) as Record<string, unknown>;
    expect(legacyResultText(text, result, asLegacyResult(result))).toBe('{"content":[]}');
  });
});

describe('asLegacyResult: a member named __proto__', () => {
  it('stays an own member of the copy, never its prototype', () => {
    const result = JSON.parse(
      '{"__proto__":{"isError":true,"_meta":{"k":1}},"content":[],"ttlMs":0}',
    ) as Record<string, unknown>;
    const legacy = asLegacyResult(result);
    expect(legacy).not.toBe(result);
    expect(Object.getPrototypeOf(legacy)).toBe(Object.prototype);
    expect(legacy.isError).toBeUndefined();
    expect(legacy._meta).toBeUndefined();
    expect(Object.keys(legacy)).toEqual(['__proto__', 'content']);
    expect(legacyResultText(JSON.stringify(result), result, legacy)).toBe(
      '{"__proto__":{"isError":true,"_meta":{"k":1}},"content":[]}',
    );
  });
});

describe('legacyResultText: the projection cut out of the upstream text', () => {
  /** The text legacyResultText gives for `text`, checked to read as asLegacyResult's value. */
  function cut(text: string, taskFields = false): string | undefined {
    const result = JSON.parse(text) as Record<string, unknown>;
    const legacy = asLegacyResult(result, taskFields);
    const out = legacyResultText(text, result, legacy);
    if (out !== undefined) expect(JSON.parse(out)).toEqual(legacy);
    return out;
  }

  it('cuts resultType "complete", the cache hints and serverInfo, and keeps every other member as written', () => {
    expect(
      cut(
        String.raw`{"resultType":"complete","content":[{"type":"text","text":"caf\u00e9 \"}\""}],"ttlMs":0,` +
          String.raw`"structuredContent":{"big":12345678901234567890,"f":1.50},"cacheScope":"private",` +
          String.raw`"_meta":{"a":1,"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"},"b":[2]}}`,
      ),
    ).toBe(
      String.raw`{"content":[{"type":"text","text":"caf\u00e9 \"}\""}],` +
        String.raw`"structuredContent":{"big":12345678901234567890,"f":1.50},"_meta":{"a":1,"b":[2]}}`,
    );
  });

  it('leaves out a _meta that held only serverInfo, and keeps whitespace inside members', () => {
    expect(
      cut(
        '{ "contents" : [ 1, 2 ] , "_meta" : { "io.modelcontextprotocol/serverInfo" : {} } , "resultType" : "complete" }',
      ),
    ).toBe('{"contents" : [ 1, 2 ]}');
  });

  it('keeps ttlMs of a task and a resultType other than complete', () => {
    expect(cut('{"resultType":"task","task":{"taskId":"t"},"ttlMs":5}')).toBe(
      '{"resultType":"task","task":{"taskId":"t"},"ttlMs":5}',
    );
    expect(cut('{"tasks":[],"ttlMs":5,"cacheScope":"private"}', true)).toBe(
      '{"tasks":[],"ttlMs":5}',
    );
  });

  it('reads member names written with escapes', () => {
    expect(cut(String.raw`{"\u0074tlMs":0,"\u0063ontent":[]}`)).toBe(
      String.raw`{"\u0063ontent":[]}`,
    );
  });

  it('gives the text as it is for a result the projection did not change', () => {
    const text = '{"content":[],"n":1.0}';
    const result = JSON.parse(text) as Record<string, unknown>;
    expect(legacyResultText(text, result, asLegacyResult(result))).toBe(text);
  });

  it('gives up on a name written twice, at the top or in _meta (only the last counts)', () => {
    expect(cut('{"content":[1],"ttlMs":0,"content":[]}')).toBeUndefined();
    expect(
      cut('{"content":[],"_meta":{"a":1,"io.modelcontextprotocol/serverInfo":{},"a":2}}'),
    ).toBeUndefined();
  });
});

describe("withoutModernResultMembers: a 2025 upstream's own resultType, inputRequests, requestState", () => {
  const text =
    '{"messages":[],"resultType":"input_required","n":1.50,"inputRequests":{},"requestState":"s","__proto__":{"x":1}}';
  const result = JSON.parse(text) as Record<string, unknown>;

  it('are found', () => {
    expect(hasModernResultMembers(result)).toBe(true);
    expect(hasModernResultMembers({ messages: [] })).toBe(false);
  });

  it('are cut from the result and its text; every other member stays as written', () => {
    const cut = withoutModernResultMembers(result, text);
    expect(cut.resultText).toBe('{"messages":[],"n":1.50,"__proto__":{"x":1}}');
    expect(Object.keys(cut.result)).toEqual(['messages', 'n', '__proto__']);
    expect(Object.getPrototypeOf(cut.result)).toBe(Object.prototype);
  });

  it('leave no text when the text cannot be cut (a name written twice): serialized again', () => {
    const twice = '{"resultType":"task","a":1,"a":2}';
    expect(withoutModernResultMembers(JSON.parse(twice), twice)).toEqual({ result: { a: 2 } });
  });
});
