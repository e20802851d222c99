import { h, prettyJson } from './dom.js';
import type { ToolCallResult } from './mcp-client.js';

/** `searchTime` in ms: `content[0]._meta.searchTime` (bundle tools, README), else `_meta.searchTime`. */
function searchTimeOf(result: ToolCallResult): number | undefined {
  const fromBlock = result.content?.[0]?._meta?.searchTime;
  if (typeof fromBlock === 'number') return fromBlock;
  const fromResult = result._meta?.searchTime;
  return typeof fromResult === 'number' ? fromResult : undefined;
}

/** A text block as indented JSON when it is JSON, otherwise as it came. */
function blockText(text: string): string {
  try {
    return prettyJson(JSON.parse(text));
  } catch {
    return text;
  }
}

/**
 * A tools/call result (docs/console.md "Tools", "Run"): isError, searchTime, each content block,
 * structuredContent.
 */
export function resultBlock(result: ToolCallResult, elapsedMs: number): HTMLElement {
  const searchTime = searchTimeOf(result);
  const isError = result.isError === true;
  return h(
    'div',
    { class: `result ${isError ? 'result-error' : 'result-ok'}`, 'data-field': 'result' },
    h(
      'dl',
      { class: 'summary' },
      h('dt', {}, 'isError'),
      h('dd', { 'data-field': 'isError' }, String(isError)),
      h('dt', {}, 'searchTime'),
      h('dd', { 'data-field': 'searchTime' }, searchTime === undefined ? '—' : `${searchTime} ms`),
      h('dt', {}, 'Round trip'),
      h('dd', {}, `${Math.round(elapsedMs)} ms`),
    ),
    ...(result.content ?? []).map((block, i) =>
      h(
        'section',
        { class: 'block' },
        h('h6', {}, `content[${i}] (${block.type})`),
        h(
          'pre',
          { class: 'json', 'data-field': 'content' },
          block.type === 'text' && typeof block.text === 'string'
            ? blockText(block.text)
            : prettyJson(block),
        ),
      ),
    ),
    result.structuredContent !== undefined
      ? h(
          'section',
          { class: 'block' },
          h('h6', {}, 'structuredContent'),
          h('pre', { class: 'json' }, prettyJson(result.structuredContent)),
        )
      : null,
  );
}

/** A call that got no result: the JSON-RPC error or the transport failure. */
export function failureBlock(message: string): HTMLElement {
  return h(
    'div',
    { class: 'result result-error', role: 'alert', 'data-field': 'result' },
    h('p', {}, message),
  );
}
