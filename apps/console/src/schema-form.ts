import { h, prettyJson } from './dom.js';

/** A JSON Schema as far as the form reads it; anything else stays in the JSON editor. */
interface Schema {
  readonly type?: unknown;
  readonly properties?: Record<string, unknown>;
  readonly required?: unknown;
  readonly enum?: unknown;
  readonly description?: unknown;
  readonly title?: unknown;
  readonly default?: unknown;
  readonly oneOf?: unknown;
  readonly anyOf?: unknown;
  readonly allOf?: unknown;
  readonly $ref?: unknown;
  readonly patternProperties?: unknown;
  readonly additionalProperties?: unknown;
}

export type ReadArguments =
  | { readonly ok: true; readonly args: Record<string, unknown> }
  | { readonly ok: false; readonly error: string };

export interface ArgumentsForm {
  readonly element: HTMLElement;
  read(): ReadArguments;
}

type FieldKind = 'string' | 'integer' | 'number' | 'boolean' | 'enum' | 'json';

interface Field {
  readonly name: string;
  readonly kind: FieldKind;
  readonly required: boolean;
  readonly control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;
  readonly options?: readonly unknown[];
}

const asSchema = (value: unknown): Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {};

function kindOf(schema: Schema): FieldKind {
  if (Array.isArray(schema.enum) && schema.enum.every((v) => v === null || typeof v !== 'object'))
    return 'enum';
  switch (schema.type) {
    case 'string':
    case 'integer':
    case 'number':
    case 'boolean':
      return schema.type;
    default:
      return 'json';
  }
}

/** Top-level keywords a list of fields cannot express: the JSON editor is the form then. */
function formCannotExpress(schema: Schema): string | undefined {
  if (schema.properties === undefined || typeof schema.properties !== 'object')
    return 'the input schema lists no properties';
  for (const key of ['oneOf', 'anyOf', 'allOf', '$ref', 'patternProperties'] as const)
    if (schema[key] !== undefined) return `the input schema uses ${key}`;
  return undefined;
}

function control(id: string, kind: FieldKind, schema: Schema, required: boolean): Field['control'] {
  const described = typeof schema.description === 'string' ? `${id}-desc` : undefined;
  const common = { id, name: id, 'aria-describedby': described, required };
  switch (kind) {
    case 'string':
      return h('input', { ...common, type: 'text', autocomplete: 'off' });
    case 'integer':
      return h('input', { ...common, type: 'number', step: '1', inputmode: 'numeric' });
    case 'number':
      return h('input', { ...common, type: 'number', step: 'any', inputmode: 'decimal' });
    case 'boolean':
      return h(
        'select',
        common,
        required ? null : h('option', { value: '' }, '(not set)'),
        h('option', { value: 'true' }, 'true'),
        h('option', { value: 'false' }, 'false'),
      );
    case 'enum': {
      const values = (schema.enum as unknown[]) ?? [];
      return h(
        'select',
        common,
        required ? null : h('option', { value: '' }, '(not set)'),
        ...values.map((v, i) =>
          h('option', { value: String(i) }, typeof v === 'string' ? v : JSON.stringify(v)),
        ),
      );
    }
    case 'json':
      return h('textarea', { ...common, rows: 3, spellcheck: 'false', placeholder: 'JSON' });
  }
}

function readField(field: Field): { value?: unknown; error?: string } {
  const raw = field.control.value.trim();
  if (raw === '') return field.required ? { error: `${field.name} is required` } : {};
  switch (field.kind) {
    case 'string':
      return { value: field.control.value };
    case 'integer':
    case 'number': {
      const n = Number(raw);
      if (!Number.isFinite(n) || (field.kind === 'integer' && !Number.isInteger(n)))
        return {
          error: `${field.name} must be ${field.kind === 'integer' ? 'an integer' : 'a number'}`,
        };
      return { value: n };
    }
    case 'boolean':
      return { value: raw === 'true' };
    case 'enum':
      return { value: field.options?.[Number(raw)] };
    case 'json':
      try {
        return { value: JSON.parse(raw) as unknown };
      } catch {
        return { error: `${field.name} is not valid JSON` };
      }
  }
}

/**
 * A form generated from a tool's inputSchema (docs/console.md "Tools", "Run"): one labelled control
 * per property (text, number, true/false, a choice for an enum, a JSON box for objects, arrays and
 * unions), and a JSON editor for the whole arguments object for what a form cannot express.
 */
export function argumentsForm(inputSchema: unknown, idPrefix: string): ArgumentsForm {
  const schema = asSchema(inputSchema);
  const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
  const fields: Field[] = [];
  const rows: HTMLElement[] = [];
  Object.entries(schema.properties ?? {}).forEach(([name, value], i) => {
    const prop = asSchema(value);
    const kind = kindOf(prop);
    const id = `${idPrefix}-arg-${i}`;
    const isRequired = required.has(name);
    const input = control(id, kind, prop, isRequired);
    if (prop.default !== undefined && kind !== 'enum' && kind !== 'boolean')
      input.value = typeof prop.default === 'string' ? prop.default : JSON.stringify(prop.default);
    fields.push({
      name,
      kind,
      required: isRequired,
      control: input,
      ...(kind === 'enum' ? { options: prop.enum as unknown[] } : {}),
    });
    rows.push(
      h(
        'div',
        { class: 'arg' },
        h(
          'label',
          { for: id },
          name,
          isRequired ? h('span', { class: 'req' }, ' (required)') : null,
          kind === 'json' ? h('span', { class: 'hint' }, ' JSON') : null,
        ),
        input,
        typeof prop.description === 'string'
          ? h('p', { class: 'hint', id: `${id}-desc` }, prop.description)
          : null,
      ),
    );
  });

  const cannot = formCannotExpress(schema);
  const jsonId = `${idPrefix}-json`;
  const editor = h('textarea', {
    id: jsonId,
    rows: 8,
    spellcheck: 'false',
    class: 'json-editor',
  });
  editor.value = '{}';
  const toggleId = `${idPrefix}-as-json`;
  const toggle = h('input', { type: 'checkbox', id: toggleId });
  const formPart = h('div', { class: 'arg-fields' }, ...rows);
  const jsonPart = h(
    'div',
    { class: 'arg-json' },
    h('label', { for: jsonId }, 'Arguments (JSON object)'),
    editor,
  );
  const readFields = (): ReadArguments => {
    const entries: [string, unknown][] = [];
    const errors: string[] = [];
    for (const field of fields) {
      const { value, error } = readField(field);
      if (error !== undefined) errors.push(error);
      else if (value !== undefined) entries.push([field.name, value]);
    }
    // Object.fromEntries defines each property as its own: an assignment `args[name] = value`
    // would set the prototype for a property a schema names `__proto__` (a name JSON allows),
    // and the operator's value would never be sent (docs/console.md "Tools", "Run").
    return errors.length > 0
      ? { ok: false, error: errors.join('; ') }
      : { ok: true, args: Object.fromEntries(entries) };
  };
  const showJson = (on: boolean): void => {
    if (on) {
      const current = readFields();
      if (current.ok && Object.keys(current.args).length > 0)
        editor.value = prettyJson(current.args);
    }
    formPart.hidden = on;
    jsonPart.hidden = !on;
  };
  toggle.addEventListener('change', () => showJson(toggle.checked));
  toggle.checked = cannot !== undefined;
  showJson(toggle.checked);

  const element = h(
    'div',
    { class: 'arguments' },
    cannot !== undefined ? h('p', { class: 'hint' }, `JSON editor: ${cannot}.`) : null,
    cannot === undefined
      ? h(
          'p',
          { class: 'toggle' },
          toggle,
          h('label', { for: toggleId }, ' Edit the arguments as JSON'),
        )
      : null,
    formPart,
    jsonPart,
  );
  return {
    element,
    read: (): ReadArguments => {
      if (!toggle.checked) return readFields();
      try {
        const parsed = JSON.parse(editor.value) as unknown;
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
          return { ok: false, error: 'the arguments must be a JSON object' };
        return { ok: true, args: parsed as Record<string, unknown> };
      } catch {
        return { ok: false, error: 'the arguments are not valid JSON' };
      }
    },
  };
}
