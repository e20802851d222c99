import { classifyMessage, parseMessage, textDepthExceeds } from './parse-message';
import { idJson, RawNumberId } from './jsonrpc.types';

describe('classifyMessage: requests and notifications', () => {
  it('classifies an object with jsonrpc "2.0", a method and an id as a request', () => {
    expect(
      classifyMessage({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'r.a' } }),
    ).toEqual({ kind: 'request', id: 7, method: 'tools/call', params: { name: 'r.a' } });
  });

  it('accepts a string id and absent params', () => {
    expect(classifyMessage({ jsonrpc: '2.0', id: 'abc-1', method: 'ping' })).toEqual({
      kind: 'request',
      id: 'abc-1',
      method: 'ping',
      params: undefined,
    });
  });

  it('accepts 0, negative and fractional ids and the empty string id', () => {
    for (const id of [0, -3, 1.5, '']) {
      expect(classifyMessage({ jsonrpc: '2.0', id, method: 'ping' })).toMatchObject({
        kind: 'request',
        id,
      });
    }
  });

  it('classifies an object with a method and no id as a notification, params passed as is', () => {
    expect(
      classifyMessage({ jsonrpc: '2.0', method: 'notifications/initialized', params: [1] }),
    ).toEqual({ kind: 'notification', method: 'notifications/initialized', params: [1] });
    expect(classifyMessage({ jsonrpc: '2.0', method: 'notifications/cancelled' })).toEqual({
      kind: 'notification',
      method: 'notifications/cancelled',
      params: undefined,
    });
  });
});

describe('classifyMessage: responses from the client', () => {
  it('classifies an object with result and id as a response', () => {
    const message = { jsonrpc: '2.0', id: 'srv-1', result: {} };
    // the whole message is kept: a relayed request's answer goes back to its upstream
    // (docs/operations.md §10 "Relaying")
    expect(classifyMessage(message)).toEqual({ kind: 'response', id: 'srv-1', message });
  });

  it('classifies an object with error and id as a response, keeping a null id', () => {
    const message = { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'x' } };
    expect(classifyMessage(message)).toEqual({ kind: 'response', id: null, message });
  });

  it('rejects a result without an id as an invalid request', () => {
    expect(classifyMessage({ jsonrpc: '2.0', result: {} })).toEqual({
      kind: 'invalid-request',
      id: null,
      reason: 'not a JSON-RPC request, notification or response',
    });
  });
});

describe('classifyMessage: batches (removed in 2025-06-18, B15)', () => {
  it('classifies a JSON array as a batch', () => {
    expect(classifyMessage([{ jsonrpc: '2.0', id: 1, method: 'ping' }])).toEqual({
      kind: 'batch',
    });
  });

  it('classifies an empty array as a batch', () => {
    expect(classifyMessage([])).toEqual({ kind: 'batch' });
  });
});

describe('classifyMessage: invalid requests', () => {
  it.each([
    ['missing', { id: 4, method: 'ping' }],
    ['"1.0"', { jsonrpc: '1.0', id: 4, method: 'ping' }],
    ['the number 2', { jsonrpc: 2, id: 4, method: 'ping' }],
  ])('rejects jsonrpc %s, keeping a valid id', (_label, value) => {
    expect(classifyMessage(value)).toEqual({
      kind: 'invalid-request',
      id: 4,
      reason: 'jsonrpc must be "2.0"',
    });
  });

  it.each([[5], [null], [''], [{ name: 'ping' }]])(
    'rejects a method that is not a non-empty string (%p)',
    (method) => {
      expect(classifyMessage({ jsonrpc: '2.0', id: 'x', method })).toEqual({
        kind: 'invalid-request',
        id: 'x',
        reason: 'method must be a non-empty string',
      });
    },
  );

  it.each([[null], [{ n: 1 }], [true], [false], [[1]]])(
    'rejects a request id that is not a string or a number (%p)',
    (id) => {
      expect(classifyMessage({ jsonrpc: '2.0', id, method: 'ping' })).toEqual({
        kind: 'invalid-request',
        id: null,
        reason: 'id must be a string or a number',
      });
    },
  );

  it.each([[null], ['text'], [42], [true], [undefined]])(
    'rejects a body that is not an object (%p)',
    (value) => {
      expect(classifyMessage(value)).toEqual({
        kind: 'invalid-request',
        id: null,
        reason: 'the body must be a JSON-RPC object',
      });
    },
  );

  it('rejects an object with neither method nor result nor error', () => {
    expect(classifyMessage({ jsonrpc: '2.0', id: 9 })).toEqual({
      kind: 'invalid-request',
      id: 9,
      reason: 'not a JSON-RPC request, notification or response',
    });
  });
});

describe('classifyMessage: params must be an object', () => {
  it.each([[[1, 2]], ['x'], [3], [null], [true]])(
    'answers params %p with invalid-params carrying the id and method',
    (params) => {
      expect(classifyMessage({ jsonrpc: '2.0', id: 11, method: 'tools/list', params })).toEqual({
        kind: 'invalid-params',
        id: 11,
        method: 'tools/list',
        reason: 'params must be an object',
      });
    },
  );
});

describe('parseMessage: JSON text to a classified message', () => {
  it.each([['{"jsonrpc":"2.0",'], [''], ['not json'], ['{"a":1} trailing']])(
    'reports a parse error for %p',
    (text) => {
      expect(parseMessage(text)).toEqual({
        message: { kind: 'parse-error', reason: 'the body is not valid JSON' },
        value: undefined,
      });
    },
  );

  it('returns the parsed value with its classification', () => {
    const text =
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"r.a","arguments":{}}}';
    expect(parseMessage(text)).toEqual({
      message: {
        kind: 'request',
        id: 1,
        method: 'tools/call',
        params: { name: 'r.a', arguments: {} },
      },
      value: JSON.parse(text),
    });
  });

  it('classifies an id too large for a double (1e400) as invalid', () => {
    expect(parseMessage('{"jsonrpc":"2.0","id":1e400,"method":"ping"}').message).toEqual({
      kind: 'invalid-request',
      id: null,
      reason: 'id must be a string or a number',
    });
  });

  it('classifies a JSON array body as a batch', () => {
    expect(parseMessage('[]').message).toEqual({ kind: 'batch' });
  });
});

describe('parseMessage against hostile bodies (adversarial findings)', () => {
  it('reports bytes that are not UTF-8 (null text) as a parse error', () => {
    expect(parseMessage(null).message).toEqual({
      kind: 'parse-error',
      reason: 'the body is not valid UTF-8',
    });
  });

  it('refuses a body nested deeper than 128 levels before parsing it', () => {
    const deep = `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":${'['.repeat(200)}${']'.repeat(200)}}}`;
    expect(parseMessage(deep).message).toEqual({
      kind: 'invalid-request',
      id: null,
      reason: 'the body nests deeper than 128 levels',
    });
  });

  it('refuses a body of more than 250,000 JSON values before parsing it, and takes one of fewer', () => {
    const wide = (n: number): string =>
      `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"rows":[${Array.from({ length: n }, () => '0').join(',')}]}}`;
    expect(parseMessage(wide(250_001)).message).toEqual({
      kind: 'invalid-request',
      id: null,
      reason: 'the body holds more than 250000 JSON values',
    });
    expect(parseMessage(wide(200_000)).message).toMatchObject({ kind: 'request', method: 'ping' });
  });

  it('accepts brackets inside strings, whatever their number', () => {
    const text = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'ping',
      params: { s: '['.repeat(500) },
    });
    expect(parseMessage(text).message.kind).toBe('request');
    expect(textDepthExceeds(text, 128)).toBe(false);
  });

  it('keeps an id beyond 2^53 exactly as the client wrote it', () => {
    const { message } = parseMessage(
      '{"jsonrpc":"2.0","id":12345678901234567890123,"method":"ping"}',
    );
    expect(message.kind).toBe('request');
    const id = (message as { id: unknown }).id;
    expect(id).toBeInstanceOf(RawNumberId);
    expect(idJson(id as RawNumberId)).toBe('12345678901234567890123');
  });

  it('keeps safe integer and string ids as they are', () => {
    expect(
      (parseMessage('{"jsonrpc":"2.0","id":42,"method":"ping"}').message as { id: unknown }).id,
    ).toBe(42);
    expect(idJson('a"b')).toBe('"a\\"b"');
  });
});
