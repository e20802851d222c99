/** Attributes of `h`: strings become attributes, booleans toggle them, functions are listeners. */
export type Attrs = Record<string, string | number | boolean | undefined | ((e: Event) => void)>;
export type Child = Node | string | number | null | undefined | false;

/**
 * Creates an element. Text children are text nodes, never HTML: nothing a source publishes
 * (names, descriptions, schemas, results) can inject markup into the console.
 */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(key.replace(/^on/, ''), value);
    else if (value === true) el.setAttribute(key, '');
    else el.setAttribute(key, String(value));
  }
  append(el, children);
  return el;
}

export function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

/** Replaces every child of `parent`. */
export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** The element with this id; throws when the page lacks it (a build mistake, not a runtime state). */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (el === null) throw new Error(`console page has no #${id}`);
  return el as T;
}

/** "12 s", "4 min", "3 h", "2 d": an age in seconds, short. */
export function age(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—';
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h`;
  return `${Math.floor(seconds / 86400)} d`;
}

/** An ISO time as local date and time, or "never". */
export function when(iso: string | null | undefined): string {
  if (iso === null || iso === undefined) return 'never';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

/** A definition list row pair for `<dl>`. */
export function field(label: string, value: Child, testId?: string): Node[] {
  return [h('dt', {}, label), h('dd', testId === undefined ? {} : { 'data-field': testId }, value)];
}

export function prettyJson(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? 'undefined';
}

/**
 * Sets `parent`'s children to `next`, keeping each old child whose markup is unchanged (so
 * a poll does not steal keyboard focus or an open panel from a card that did not change).
 * Children are matched by the `key` attribute.
 */
export function patchKeyed(parent: Element, next: readonly HTMLElement[], key: string): void {
  const old = new Map<string, Element>();
  for (const child of Array.from(parent.children)) {
    const k = child.getAttribute(key);
    if (k !== null) old.set(k, child);
  }
  const kept = next.map((el) => {
    const before = old.get(el.getAttribute(key) ?? '');
    return before !== undefined && before.outerHTML === el.outerHTML ? before : el;
  });
  place(parent, kept);
}

/**
 * Makes `next` the children of `parent`, in order, moving only the elements out of place: an
 * element that stays where it was is not detached, so it keeps the keyboard focus.
 */
export function place(parent: Element, next: readonly Element[]): void {
  next.forEach((el, i) => {
    if (parent.children[i] !== el) parent.insertBefore(el, parent.children[i] ?? null);
  });
  while (parent.children.length > next.length) parent.lastElementChild?.remove();
}
