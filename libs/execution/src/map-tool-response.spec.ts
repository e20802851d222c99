import type { CallToolResult } from './call-tool-result';
import { mapToolFailure, mapToolResponse, type ToolHttpResponse } from './map-tool-response';

const MAX_ERROR_CHARS = 300;

function call(
  status: number,
  contentType: string,
  body: string,
  elapsedMs = 12,
  maxErrorChars = MAX_ERROR_CHARS,
): CallToolResult {
  const response: ToolHttpResponse = { status, contentType, body };
  return mapToolResponse('ops.tool', response, elapsedMs, maxErrorChars);
}

function textOf(result: CallToolResult): string {
  return result.content[0].text;
}

/** A success has no isError member at all (not even false). */
function expectSuccess(result: CallToolResult, text: string): void {
  expect(result).toEqual({ content: [{ type: 'text', text, _meta: { searchTime: 12 } }] });
  expect('isError' in result).toBe(false);
}

describe('2xx answers become the tool result (contract §10, B18)', () => {
  it('B18 t_json: a JSON object is returned as compact JSON text with key order kept', () => {
    expectSuccess(
      call(200, 'application/json', '{"b":1,  "a":[1, 2], "nested":{"z":null}}'),
      '{"b":1,"a":[1,2],"nested":{"z":null}}',
    );
  });

  it('B18 t_array: a JSON array is returned as compact JSON text', () => {
    expectSuccess(call(200, 'application/json', '[ 1, "x" ]'), '[1,"x"]');
  });

  it('B18 t_string: a JSON string keeps its quotes', () => {
    expectSuccess(call(200, 'application/json', '"done"'), '"done"');
  });

  it('B18 t_text: a text/plain body is returned as is, not as an error', () => {
    expectSuccess(call(200, 'text/plain', 'OK done'), 'OK done');
  });

  it('B18 t_204: an empty 204 answer is an empty text, not an error', () => {
    expectSuccess(call(204, '', ''), '');
  });

  it('reads the JSON media type case-insensitively, with parameters and +json suffixes', () => {
    expectSuccess(call(200, 'Application/JSON; charset=utf-8', '{ "a" : 1 }'), '{"a":1}');
    expectSuccess(call(201, 'application/vnd.report+json', '[ 1 ]'), '[1]');
  });

  it('keeps big integers, number spellings and escapes byte for byte', () => {
    const body = String.raw`{ "id": 12345678901234567890, "f": 1.0, "e": 1e3, "s": "caf\u00e9 \"x\"" }`;
    expectSuccess(
      call(200, 'application/json', body),
      String.raw`{"id":12345678901234567890,"f":1.0,"e":1e3,"s":"caf\u00e9 \"x\""}`,
    );
  });

  it('keeps whitespace inside JSON strings', () => {
    expectSuccess(
      call(200, 'application/json', '{ "msg" : " a  b \\t c " }'),
      '{"msg":" a  b \\t c "}',
    );
  });

  it('does not compact a non-JSON body even when it looks like JSON', () => {
    expectSuccess(call(200, 'text/plain', '{ "a" : 1 }'), '{ "a" : 1 }');
  });

  it('compacts a JSON object or array sent with no Content-Type at all (contract §10), and only such', () => {
    expectSuccess(call(200, '', '{ "a" : [1, 2] }'), '{"a":[1,2]}');
    expectSuccess(call(200, '', ' [ 1, "x" ]'), '[1,"x"]');
    expectSuccess(call(200, '', '{ "a" :'), '{ "a" :');
    expectSuccess(call(200, '', '"done"'), '"done"');
    expectSuccess(call(200, '', 'OK done'), 'OK done');
  });

  it('carries the elapsed time in content[0]._meta.searchTime', () => {
    expect(call(200, 'application/json', '{}', 4321).content[0]._meta).toEqual({
      searchTime: 4321,
    });
    expect(call(500, 'text/plain', 'x', 987).content[0]._meta).toEqual({ searchTime: 987 });
  });

  it('B18 t_trunc: a 2xx JSON body that does not parse is an isError result saying the JSON is invalid', () => {
    const result = call(200, 'application/json', '{"a":');
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      'Tool ops.tool failed: the Tool Service answered HTTP 200 with a body that is not valid JSON.',
    );
    expect(textOf(result)).not.toContain('{"a":');
  });
});

describe('3xx, 4xx and 5xx answers become isError results (contract §10, B18)', () => {
  it('B18 t_502: an HTML error page gives isError with the status and no HTML', () => {
    const result = call(502, 'text/html', '<html><body><h1>502 Bad Gateway</h1></body></html>');
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      'Tool ops.tool failed: the Tool Service answered HTTP 502 (a server error) (an HTML error page, not shown)',
    );
    expect(textOf(result)).not.toMatch(/<[a-z!]/i);
  });

  it('recognizes an HTML page by its text when the content type does not say so', () => {
    for (const body of [
      '<!DOCTYPE html><html><p>down</p></html>',
      '\n  <HTML><p>down</p></HTML>',
    ]) {
      const text = textOf(call(503, 'text/plain', body));
      expect(text).toContain('HTTP 503');
      expect(text).not.toContain('<');
      expect(text).not.toContain('down');
    }
  });

  // HTML pages are recognised by their markup too, not only by a text/html Content-Type.
  it.each([
    ['no content type, starting with <head>', '', '<head><title>502</title></head><body>x</body>'],
    [
      'text/plain, starting with a comment',
      'text/plain',
      '<!-- lb --><html><body>502</body></html>',
    ],
    [
      'application/xhtml+xml',
      'application/xhtml+xml',
      '<?xml version="1.0"?><!DOCTYPE html><html><body>502</body></html>',
    ],
  ])('B18: keeps an HTML error page out of the text (%s)', (_label, contentType, body) => {
    const result = call(502, contentType, body);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('HTTP 502');
    expect(textOf(result)).not.toMatch(/<[a-z!?]/i);
  });

  it('B18 t_401: a JSON error body gives isError with the status and the compact error JSON', () => {
    const result = call(401, 'application/json', '{"error": "invalid api key"}');
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      'Tool ops.tool failed: the Tool Service answered HTTP 401 (a client error): {"error":"invalid api key"}',
    );
  });

  it('B18 t_302: a redirect is an isError result saying it is not followed', () => {
    const result = call(302, '', '');
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      'Tool ops.tool failed: the Tool Service answered HTTP 302 (a redirect, which the gateway does not follow).',
    );
  });

  it('shows a plain-text error body on one line', () => {
    const text = textOf(call(500, 'text/plain', '  line one\n\tline two  \n'));
    expect(text).toBe(
      'Tool ops.tool failed: the Tool Service answered HTTP 500 (a server error): line one line two',
    );
  });

  it('leaves an empty error body out', () => {
    expect(textOf(call(404, 'text/plain', ''))).toBe(
      'Tool ops.tool failed: the Tool Service answered HTTP 404 (a client error)',
    );
  });

  it('truncates a long error body to maxErrorChars', () => {
    const result = call(500, 'text/plain', 'x'.repeat(1000), 12, 40);
    expect(textOf(result)).toBe(
      `Tool ops.tool failed: the Tool Service answered HTTP 500 (a server error): ${'x'.repeat(40)}…`,
    );
  });

  it('keeps an error body of exactly maxErrorChars whole', () => {
    const text = textOf(call(400, 'text/plain', 'y'.repeat(40), 12, 40));
    expect(text.endsWith(`: ${'y'.repeat(40)}`)).toBe(true);
  });

  it('shows an error body that claims JSON but does not parse as raw text', () => {
    expect(textOf(call(500, 'application/json', '{"error": '))).toBe(
      'Tool ops.tool failed: the Tool Service answered HTTP 500 (a server error): {"error":',
    );
  });
});

describe('calls without a usable answer become isError results without internal addresses', () => {
  const noAddress = (text: string): void => {
    expect(text).not.toContain('http://');
    expect(text).not.toContain('https://');
    expect(text).not.toContain('127.0.0.1');
  };

  it('a timeout names the timeout in ms and warns that the call may still have run (B17)', () => {
    const result = mapToolFailure('reports.quick', { kind: 'timeout', timeoutMillis: 500 }, 503);
    expect(result).toEqual({
      isError: true,
      content: [
        {
          type: 'text',
          text:
            'Tool reports.quick failed: no answer within its timeout of 500 ms; the call was abandoned. ' +
            'It may still have run on the Tool Service; check before retrying a tool that changes data.',
          _meta: { searchTime: 503 },
        },
      ],
    });
    noAddress(textOf(result));
  });

  it('a connection failure names its cause', () => {
    const result = mapToolFailure('reports.quick', { kind: 'connect', code: 'ECONNREFUSED' }, 3);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      'Tool reports.quick failed: its Tool Service could not be reached (ECONNREFUSED). Try again later.',
    );
    noAddress(textOf(result));
  });

  it('a connection that broke before any answer says the tool may have run, never "try again"', () => {
    const result = mapToolFailure(
      'reports.quick',
      { kind: 'connect', code: 'UND_ERR_SOCKET', mayHaveRun: true },
      3,
    );
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      'Tool reports.quick failed: its Tool Service closed the connection without answering (UND_ERR_SOCKET). ' +
        'It may still have run; check before retrying a tool that changes data.',
    );
  });

  it('an oversized answer names the byte limit', () => {
    const result = mapToolFailure('reports.quick', { kind: 'too-large', maxBytes: 8_388_608 }, 40);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      "Tool reports.quick failed: the Tool Service's answer exceeded 8388608 bytes.",
    );
    expect(result.content[0]._meta.searchTime).toBe(40);
    noAddress(textOf(result));
  });

  it('a malformed HTTP answer says so and names the parser error, not reachability', () => {
    const result = mapToolFailure(
      'reports.quick',
      { kind: 'invalid-answer', code: 'HPE_INVALID_CHUNK_SIZE' },
      7,
    );
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      'Tool reports.quick failed: its Tool Service sent an answer that is not valid HTTP (HPE_INVALID_CHUNK_SIZE).',
    );
    noAddress(textOf(result));
  });
});

describe('a Retry-After on a 4xx/5xx answer is reported, never waited for (docs/operations.md §7 "Retry-After")', () => {
  const withRetry = (
    status: number,
    retryAfter: ToolHttpResponse['retryAfter'],
    body = '',
  ): CallToolResult =>
    mapToolResponse(
      'ops.tool',
      { status, contentType: 'text/plain', body, retryAfter },
      12,
      MAX_ERROR_CHARS,
    );

  it('429 with retry-after 7: the text says "retry after 7 s" and _meta.retryAfterSeconds is 7', () => {
    const result = withRetry(429, { seconds: 7 }, 'slow down');
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      'Tool ops.tool failed: the Tool Service answered HTTP 429 (a client error; retry after 7 s): slow down',
    );
    expect(result.content[0]._meta).toEqual({ searchTime: 12, retryAfterSeconds: 7 });
  });

  it('503 with an HTTP date: the text and _meta carry the date and the seconds to it', () => {
    const result = withRetry(503, { seconds: 120, date: 'Mon, 30 Nov 2026 12:02:00 GMT' });
    expect(textOf(result)).toBe(
      'Tool ops.tool failed: the Tool Service answered HTTP 503 (a server error; retry after Mon, 30 Nov 2026 12:02:00 GMT (in 120 s))',
    );
    expect(result.content[0]._meta).toEqual({
      searchTime: 12,
      retryAfterSeconds: 120,
      retryAfter: 'Mon, 30 Nov 2026 12:02:00 GMT',
    });
  });

  it('without a (valid) Retry-After the text and _meta are as before', () => {
    const result = withRetry(503, undefined);
    expect(textOf(result)).toBe(
      'Tool ops.tool failed: the Tool Service answered HTTP 503 (a server error)',
    );
    expect(result.content[0]._meta).toEqual({ searchTime: 12 });
  });

  it('ignores a Retry-After on a 2xx answer', () => {
    const result = mapToolResponse(
      'ops.tool',
      { status: 200, contentType: 'text/plain', body: 'ok', retryAfter: { seconds: 7 } },
      12,
      MAX_ERROR_CHARS,
    );
    expect(result).toEqual({ content: [{ type: 'text', text: 'ok', _meta: { searchTime: 12 } }] });
  });
});

describe('answers that cannot be read become isError results with the reason (docs/operations.md §7)', () => {
  it('names the encoding or charset that could not be read', () => {
    const result = mapToolFailure(
      'ops.tool',
      { kind: 'undecodable', reason: 'unsupported content-encoding "x-foo"' },
      5,
    );
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      `Tool ops.tool failed: the Tool Service's answer could not be read: unsupported content-encoding "x-foo".`,
    );
  });

  it('says an answer went over the cap once decoded', () => {
    expect(
      textOf(mapToolFailure('ops.tool', { kind: 'too-large', maxBytes: 1024, decoded: true }, 5)),
    ).toBe(`Tool ops.tool failed: the Tool Service's answer exceeded 1024 bytes once decoded.`);
  });
});

describe('answers nested deeper than 128 levels (docs/operations.md §2 "Calls nobody waits for")', () => {
  const deep = (levels: number): string => `${'['.repeat(levels)}1${']'.repeat(levels)}`;

  it('refuses a 2xx JSON answer of 6 MB of nested brackets without parsing it', () => {
    const body = deep(3_000_000);
    const result = mapToolResponse(
      'reports.deep',
      { status: 200, contentType: 'application/json', body },
      5,
      300,
    );
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toBe(
      'Tool reports.deep failed: the Tool Service answered HTTP 200 with JSON nested deeper than 128 levels.',
    );
  });

  it('accepts 128 levels, as for requests', () => {
    const result = mapToolResponse(
      'reports.deep',
      { status: 200, contentType: 'application/json', body: deep(128) },
      5,
      300,
    );
    expect(result.isError).toBeUndefined();
    expect(result.content[0].text).toBe(deep(128));
  });

  it('shows a deep JSON error body as text, without parsing it', () => {
    const result = mapToolResponse(
      'reports.deep',
      { status: 400, contentType: 'application/json', body: deep(10_000) },
      5,
      40,
    );
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toContain('HTTP 400');
  });
});
