import { h, prettyJson } from './dom.js';

interface PropertySchema {
  readonly type?: unknown;
  readonly description?: unknown;
  readonly enum?: unknown;
  readonly default?: unknown;
  readonly format?: unknown;
}

function typeText(p: PropertySchema): string {
  const type = Array.isArray(p.type)
    ? p.type.join(' | ')
    : typeof p.type === 'string'
      ? p.type
      : 'any';
  const format = typeof p.format === 'string' ? ` (${p.format})` : '';
  return `${type}${format}`;
}

/**
 * A schema readably (docs/console.md "Tools", "Schema"): a table of
 * its top-level properties (name, type, required, description, allowed values, default) and
 * the whole schema as indented JSON.
 */
export function schemaBlock(title: string, schema: unknown, idPrefix: string): HTMLElement {
  const s = (typeof schema === 'object' && schema !== null ? schema : {}) as {
    properties?: Record<string, PropertySchema>;
    required?: unknown;
  };
  const required = new Set(Array.isArray(s.required) ? s.required.map(String) : []);
  const props = Object.entries(s.properties ?? {});
  const captionId = `${idPrefix}-caption`;
  return h(
    'section',
    { class: 'schema', 'aria-labelledby': captionId },
    h('h5', { id: captionId }, title),
    props.length === 0
      ? h('p', { class: 'hint' }, 'No top-level properties.')
      : h(
          'table',
          {},
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ...['Name', 'Type', 'Required', 'Description', 'Values'].map((c) =>
                h('th', { scope: 'col' }, c),
              ),
            ),
          ),
          h(
            'tbody',
            {},
            ...props.map(([name, p]) =>
              h(
                'tr',
                {},
                h('th', { scope: 'row' }, h('code', {}, name)),
                h('td', {}, typeText(p)),
                h('td', {}, required.has(name) ? 'yes' : 'no'),
                h('td', {}, typeof p.description === 'string' ? p.description : ''),
                h(
                  'td',
                  {},
                  Array.isArray(p.enum)
                    ? `one of ${p.enum.map((v) => JSON.stringify(v)).join(', ')}`
                    : '',
                  p.default !== undefined ? ` default ${JSON.stringify(p.default)}` : '',
                ),
              ),
            ),
          ),
        ),
    h(
      'details',
      {},
      h('summary', {}, `${title} as JSON`),
      h('pre', { class: 'json' }, prettyJson(schema)),
    ),
  );
}
