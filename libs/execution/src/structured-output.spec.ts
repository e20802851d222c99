import type { CallToolResult } from './call-tool-result';
import { mapToolResponse, type ToolHttpResponse } from './map-tool-response';
import { applyOutputSchema, type OutputSchemaCheck } from './structured-output';

/**
 * Stands in for the compiled `{"total": number}` schema of the example in
 * docs/operations.md §6 "Structured output".
 */
const totalIsNumber: OutputSchemaCheck = (value) =>
  typeof (value as { total?: unknown }).total === 'number'
    ? undefined
    : 'structuredContent/total must be number';

function call(status: number, contentType: string, body: string): CallToolResult {
  const response: ToolHttpResponse = { status, contentType, body };
  return applyOutputSchema(
    'shop.total',
    mapToolResponse('shop.total', response, 7, 300),
    response,
    totalIsNumber,
  );
}

function refusal(reason: string): CallToolResult {
  return {
    content: [
      { type: 'text', text: `Tool shop.total failed: ${reason}`, _meta: { searchTime: 7 } },
    ],
    isError: true,
  };
}

const MUST_BE_OBJECT =
  'the tool declares an outputSchema, so its answer must be a JSON object, but the Tool Service answered';

describe('applyOutputSchema: MCP 2025-11-25 structured output (docs/operations.md §6 "Structured output")', () => {
  it('puts a conforming JSON object answer into structuredContent and keeps it as text', () => {
    expect(call(200, 'application/json', '{ "total": 42.5 }')).toEqual({
      content: [{ type: 'text', text: '{"total":42.5}', _meta: { searchTime: 7 } }],
      structuredContent: { total: 42.5 },
    });
  });

  it('reads +json media types and parameters', () => {
    expect(
      call(200, 'application/vnd.shop+json; charset=utf-8', '{"total":1}').structuredContent,
    ).toEqual({
      total: 1,
    });
  });

  it('refuses an object that does not match the schema, with the reason', () => {
    expect(call(200, 'application/json', '{"total":"x"}')).toEqual(
      refusal(
        "the Tool Service's answer does not match the tool's outputSchema: structuredContent/total must be number.",
      ),
    );
  });

  it.each([
    ['an array', '[{"total":1}]', 'a JSON array'],
    ['a number', '42.5', 'a JSON number'],
    ['a string', '"42.5"', 'a JSON string'],
    ['null', 'null', 'null'],
  ])('refuses %s answer: structuredContent must be an object', (_label, body, kind) => {
    expect(call(200, 'application/json', body)).toEqual(refusal(`${MUST_BE_OBJECT} ${kind}.`));
  });

  it('refuses a text/plain answer, even one that reads as JSON', () => {
    expect(call(200, 'text/plain; charset=utf-8', '{"total":42.5}')).toEqual(
      refusal(`${MUST_BE_OBJECT} text/plain.`),
    );
  });

  it('refuses an answer without a Content-Type that is not JSON, and an empty JSON answer', () => {
    expect(call(200, '', 'total: 1')).toEqual(refusal(`${MUST_BE_OBJECT} without a Content-Type.`));
    expect(call(204, 'application/json', '')).toEqual(refusal(`${MUST_BE_OBJECT} an empty body.`));
  });

  it('takes a JSON object sent without a Content-Type as JSON (contract §10)', () => {
    expect(call(200, '', '{ "total" : 1 }')).toMatchObject({
      content: [{ type: 'text', text: '{"total":1}' }],
      structuredContent: { total: 1 },
    });
  });

  it('refuses an answer of more values than it parses, before parsing it', () => {
    const wide = `{"total":1,"rows":[${Array.from({ length: 300_000 }, () => '{}').join(',')}]}`;
    expect(call(200, 'application/json', wide)).toEqual(
      refusal(
        "the Tool Service answered more than 250000 JSON values, too many to check against the tool's outputSchema.",
      ),
    );
  });

  it('leaves an isError result as it is (the schema speaks of successful answers)', () => {
    const response: ToolHttpResponse = {
      status: 500,
      contentType: 'application/json',
      body: '{"total":"x"}',
    };
    const mapped = mapToolResponse('shop.total', response, 7, 300);
    expect(applyOutputSchema('shop.total', mapped, response, totalIsNumber)).toBe(mapped);
  });

  it('never quotes the answer in a refusal', () => {
    const text = call(200, 'application/json', '{"total":"SECRET-VALUE"}').content[0].text;
    expect(text).not.toContain('SECRET-VALUE');
  });
});
