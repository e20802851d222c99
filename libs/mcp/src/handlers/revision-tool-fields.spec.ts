import type { CatalogTool } from '@app/registry';
import {
  legacyOutputSchema,
  outputWrappedForLegacy,
  withLegacyOutputSchemas,
  withoutLegacyToolFields,
} from './revision-tool-fields';
import { legacyStructuredResult } from '../relay/legacy-result';

describe('withoutLegacyToolFields: a tools array as 2026-07-28 has its Tool fields', () => {
  it('drops execution and keeps everything else as it was', () => {
    const json = JSON.stringify([
      { name: 'a', inputSchema: { type: 'object' }, execution: { taskSupport: 'required' } },
      { name: 'b', inputSchema: { type: 'object' }, _meta: { execution: 'kept in _meta' } },
    ]);
    expect(JSON.parse(withoutLegacyToolFields(json))).toEqual([
      { name: 'a', inputSchema: { type: 'object' } },
      { name: 'b', inputSchema: { type: 'object' }, _meta: { execution: 'kept in _meta' } },
    ]);
  });

  it('returns a list without execution unchanged, the same string', () => {
    const json = '[{"name":"a","inputSchema":{"type":"object"}}]';
    expect(withoutLegacyToolFields(json)).toBe(json);
  });
});

describe('2025 clients get object output schemas (wire notes §2.4, G-26)', () => {
  it('wraps a non-object outputSchema as the required property result, $refs moved, $schema kept at the root', () => {
    expect(
      legacyOutputSchema({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'array',
        items: { $ref: '#/$defs/n' },
        $defs: { n: { type: 'number' } },
      }),
    ).toEqual({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        result: {
          type: 'array',
          items: { $ref: '#/properties/result/$defs/n' },
          $defs: { n: { type: 'number' } },
        },
      },
      required: ['result'],
    });
    const object = { type: 'object', properties: { a: { type: 'string' } } };
    expect(legacyOutputSchema(object)).toBe(object);
  });

  it('rewrites a tools array only where an output schema is not an object, else returns it as it is', () => {
    const plain = JSON.stringify([
      { name: 'a', outputSchema: { type: 'object' } },
      { name: 'b', outputSchema: { $schema: 'x', type: 'object', properties: {} } },
      { name: 'c', inputSchema: { type: 'object' } },
    ]);
    expect(withLegacyOutputSchemas(plain)).toBe(plain);
    const mixed = JSON.stringify([
      { name: 'a', outputSchema: { type: 'object' } },
      { name: 'b', outputSchema: { properties: {}, type: 'object' } },
      { name: 'c', outputSchema: { type: 'string' } },
    ]);
    expect(JSON.parse(withLegacyOutputSchemas(mixed))).toEqual([
      { name: 'a', outputSchema: { type: 'object' } },
      { name: 'b', outputSchema: { properties: {}, type: 'object' } },
      {
        name: 'c',
        outputSchema: {
          type: 'object',
          properties: { result: { type: 'string' } },
          required: ['result'],
        },
      },
    ]);
  });

  it("wraps a call's non-object structuredContent and adds its text when the content has none", () => {
    expect(legacyStructuredResult({ content: [], structuredContent: [2, 3, 5] }, true)).toEqual({
      content: [{ type: 'text', text: '[2,3,5]' }],
      structuredContent: { result: [2, 3, 5] },
    });
    expect(
      legacyStructuredResult(
        {
          content: [{ type: 'text', text: 'primes' }],
          structuredContent: null,
        },
        false,
      ),
    ).toEqual({ content: [{ type: 'text', text: 'primes' }], structuredContent: { result: null } });
    expect(
      legacyStructuredResult({ content: [], structuredContent: { a: 1 } }, false),
    ).toBeUndefined();
    expect(legacyStructuredResult({ content: [] }, true)).toBeUndefined();
  });

  it("wraps an object structuredContent too when the tool's schema was wrapped (a $ref or anyOf root), as the official dual-era server does", () => {
    const text = [{ type: 'text', text: '{"a":1}' }];
    expect(legacyStructuredResult({ content: text, structuredContent: { a: 1 } }, true)).toEqual({
      content: text,
      structuredContent: { result: { a: 1 } },
    });
  });

  it('tells a tool whose listed outputSchema 2025 clients get wrapped, once per tool', () => {
    const toolWith = (outputSchema?: object) =>
      ({
        publishedJson: JSON.stringify({ name: 't', inputSchema: { type: 'object' }, outputSchema }),
      }) as unknown as CatalogTool;
    expect(outputWrappedForLegacy(toolWith({ type: 'object', properties: {} }))).toBe(false);
    expect(outputWrappedForLegacy(toolWith({ properties: {}, type: 'object' }))).toBe(false);
    expect(outputWrappedForLegacy(toolWith())).toBe(false);
    expect(
      outputWrappedForLegacy(toolWith({ $ref: '#/$defs/o', $defs: { o: { type: 'object' } } })),
    ).toBe(true);
    expect(outputWrappedForLegacy(toolWith({ anyOf: [{ type: 'object' }] }))).toBe(true);
    expect(outputWrappedForLegacy(toolWith({ type: 'array' }))).toBe(true);
  });
});
