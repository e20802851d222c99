/**
 * Strings that are prefixes of a given string, found without scanning the set: the set is
 * kept sorted (UTF-16 code units) with, for each element, the index of its longest proper
 * prefix in the set. The largest element not greater than `text` starts with the longest
 * element that is a prefix of `text` (anything sorted between that prefix and `text` starts
 * with it), so the prefixes of `text` are on that element's chain: one binary search, then a
 * walk up the chain.
 */
class PrefixChains {
  private readonly sorted: readonly string[];
  private readonly parent: Int32Array;

  constructor(strings: Iterable<string>) {
    this.sorted = [...new Set(strings)].sort();
    this.parent = new Int32Array(this.sorted.length);
    const stack: number[] = [];
    for (let i = 0; i < this.sorted.length; i++) {
      const s = this.sorted[i] as string;
      while (stack.length > 0 && !s.startsWith(this.sorted[stack[stack.length - 1] as number]!))
        stack.pop();
      this.parent[i] = stack.length > 0 ? (stack[stack.length - 1] as number) : -1;
      stack.push(i);
    }
  }

  /** The elements that are prefixes of `text`, longest first. */
  prefixesOf(text: string): string[] {
    let lo = 0;
    let hi = this.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.sorted[mid] as string) <= text) lo = mid + 1;
      else hi = mid;
    }
    const out: string[] = [];
    let i = lo - 1;
    while (i >= 0 && !text.startsWith(this.sorted[i] as string)) i = this.parent[i] as number;
    for (; i >= 0; i = this.parent[i] as number) out.push(this.sorted[i] as string);
    return out;
  }
}

/**
 * Whether a URI is one a template expands to (templateMatcher): `test` takes time linear in the
 * URI's length for each part of the template, whatever the template.
 */
export interface UriMatcher {
  test(uri: string): boolean;
}

/**
 * The most segments a `{/x,y,…}` expression is matched with (one per variable): a template
 * naming more variables in one expression is no real one.
 */
const MOST_PATH_SEGMENTS = 1000;

/** What may stand in the body of an expression's expansion. */
type CharClass = (c: number) => boolean;
const SLASH = 0x2f;
const QUESTION = 0x3f;
const HASH = 0x23;
const ANY: CharClass = () => true;
const NOT_SLASH: CharClass = (c) => c !== SLASH;
const NOT_SLASH_QUERY_FRAGMENT: CharClass = (c) => c !== SLASH && c !== QUESTION && c !== HASH;
const NOT_SLASH_FRAGMENT: CharClass = (c) => c !== SLASH && c !== HASH;

/** One part of a template, as templateMatcher reads it. */
type TemplatePart =
  | { readonly kind: 'literal'; readonly text: string }
  /** One or more characters of the class. */
  | { readonly kind: 'run'; readonly chars: CharClass }
  /** Nothing, or the lead character then any characters of the class. */
  | { readonly kind: 'lead'; readonly lead: number; readonly chars: CharClass }
  /** Up to `most` segments, each `/` then characters other than `/`, `?` and `#`. */
  | { readonly kind: 'segments'; readonly most: number };

/** The part one `{operator varlist}` expression matches (see templateMatcher). */
function expressionPart(operator: string, varList: string): TemplatePart {
  switch (operator) {
    case '+':
      return { kind: 'run', chars: ANY };
    case '#':
      return { kind: 'lead', lead: HASH, chars: ANY };
    case '/': {
      const vars = varList.split(',');
      const explode = vars.some((v) => v.trim().endsWith('*'));
      return {
        kind: 'segments',
        most: explode ? Number.POSITIVE_INFINITY : Math.min(vars.length, MOST_PATH_SEGMENTS),
      };
    }
    case '.':
    case ';':
      return { kind: 'lead', lead: operator.charCodeAt(0), chars: NOT_SLASH_QUERY_FRAGMENT };
    case '?':
    case '&':
      return { kind: 'lead', lead: operator.charCodeAt(0), chars: NOT_SLASH_FRAGMENT };
    default:
      return { kind: 'run', chars: NOT_SLASH };
  }
}

/**
 * The positions of `uri` at which the part can end, given those at which it can start
 * (`from[i]` = 1: the URI's text before `i` is matched so far): one pass over the URI per part,
 * however the parts are placed, so no URI makes the match try its splits one by one.
 */
function advance(part: TemplatePart, uri: string, from: Uint8Array): Uint8Array {
  const n = uri.length;
  const to = new Uint8Array(n + 1);
  switch (part.kind) {
    case 'literal': {
      const { text } = part;
      for (let p = 0; p + text.length <= n; p++)
        if (from[p] === 1 && uri.startsWith(text, p)) to[p + text.length] = 1;
      return to;
    }
    case 'run': {
      // `inside`: some start at or before x reaches x through characters of the class
      let inside = false;
      for (let x = 0; x < n; x++) {
        if (from[x] === 1) inside = true;
        if (inside && part.chars(uri.charCodeAt(x))) to[x + 1] = 1;
        else inside = false;
      }
      return to;
    }
    case 'lead': {
      to.set(from);
      let inside = false;
      for (let x = 0; x < n; x++) {
        const c = uri.charCodeAt(x);
        if (inside && part.chars(c)) to[x + 1] = 1;
        else inside = false;
        if (from[x] === 1 && c === part.lead) {
          to[x + 1] = 1;
          inside = true;
        }
      }
      return to;
    }
    case 'segments': {
      // `open`: the fewest segments that reach x inside a segment (Infinity: none)
      let open = Number.POSITIVE_INFINITY;
      for (let x = 0; ; x++) {
        const here = from[x] === 1 ? 0 : open;
        // (`most` is Infinity for `{/x*}`: a position no segment reaches is Infinity too)
        if (here !== Number.POSITIVE_INFINITY && here <= part.most) to[x] = 1;
        if (x === n) return to;
        const c = uri.charCodeAt(x);
        if (c === SLASH) open = here + 1 <= part.most ? here + 1 : Number.POSITIVE_INFINITY;
        else if (c === QUESTION || c === HASH) open = Number.POSITIVE_INFINITY;
      }
    }
  }
}

/**
 * A URI template (RFC 6570) as a whole-string match, so a template covers every URI it can
 * expand to (docs/operations.md §10 "Routing"). `{x}` and `{+x}` match one or more characters
 * (`+` may span `/`, the simple form may not); the operators that write a leading character
 * (RFC 6570 §3.2.5–3.2.9) match that character and what follows it, or nothing (undefined
 * variables expand to ""): `{/x,y}` one `/segment` per variable (any number with `*`),
 * `{.x}` `.label`, `{;x}` `;x=v…`, `{?x}` `?x=v…`, `{&x}` `&x=v…` (none of these spans a
 * `/`, which their expansion percent-encodes), and `{#x}` `#fragment` (reserved: may span `/`).
 * A `{` without its `}` is literal text. Templates come from upstreams and URIs from any
 * client, so no regular expression is built from a template: the URI is matched part by part,
 * carrying the set of positions each part can end at (one pass per part). A backtracking
 * RegExp took seconds on a URI with the literal ends of `x://{a}{b}…{j}/end` that did not
 * match it, and RE2 took seconds to match a template of a long literal.
 */
export function templateMatcher(uriTemplate: string): UriMatcher {
  const parts: TemplatePart[] = [];
  let last = 0;
  for (const e of expressionsOf(uriTemplate)) {
    if (e.start > last) parts.push({ kind: 'literal', text: uriTemplate.slice(last, e.start) });
    parts.push(expressionPart(e.operator, e.varList));
    last = e.end;
  }
  if (last < uriTemplate.length) parts.push({ kind: 'literal', text: uriTemplate.slice(last) });
  return {
    test: (uri) => {
      let at: Uint8Array = new Uint8Array(uri.length + 1);
      at[0] = 1;
      for (const part of parts) {
        at = advance(part, uri, at);
        if (!at.includes(1)) return false;
      }
      return at[uri.length] === 1;
    },
  };
}

/** Whether `text` has none of `chars`. */
function hasNone(text: string, chars: string): boolean {
  for (let i = 0; i < text.length; i++) if (chars.includes(text[i] as string)) return false;
  return true;
}

/**
 * What expressionPart's part matches, as a test of the whole text between a template's literal
 * prefix and suffix: the same strings, with no set of positions (a template with a single
 * expression, the common case, is tested so).
 */
function expressionTest(operator: string, varList: string): (middle: string) => boolean {
  /** Empty, or the leading character then text with none of `excluded`. */
  const optional =
    (lead: string, excluded: string) =>
    (m: string): boolean =>
      m === '' || (m[0] === lead && hasNone(m.slice(1), excluded));
  switch (operator) {
    case '+':
      return (m) => m.length > 0;
    case '#':
      return (m) => m === '' || m[0] === '#';
    case '/': {
      const vars = varList.split(',');
      const explode = vars.some((v) => v.trim().endsWith('*'));
      const most = explode ? Number.POSITIVE_INFINITY : Math.min(vars.length, MOST_PATH_SEGMENTS);
      return (m) => {
        if (m === '') return true;
        if (m[0] !== '/' || !hasNone(m, '?#')) return false;
        let segments = 0;
        for (let i = 0; i < m.length; i++) if (m[i] === '/') segments++;
        return segments <= most;
      };
    }
    case '.':
      return optional('.', '/?#');
    case ';':
      return optional(';', '/?#');
    case '?':
      return optional('?', '/#');
    case '&':
      return optional('&', '/#');
    default:
      return (m) => m.length > 0 && !m.includes('/');
  }
}

/** One `{operator varlist}` expression of a template: where it is and what it says. */
interface Expression {
  readonly start: number;
  /** Just past its `}`. */
  readonly end: number;
  readonly operator: string;
  readonly varList: string;
}

/**
 * The expressions of a template: a `{` up to the next `}` (a `{` with no `}` after it is
 * literal), found by indexOf rather than a regex, in time linear in the template (a regex
 * scanning from every `{` of a template with thousands and no `}` took time quadratic in its
 * length); an index is built over every template of a catalog at each publication.
 */
function expressionsOf(uriTemplate: string): Expression[] {
  const out: Expression[] = [];
  let from = 0;
  for (;;) {
    const start = uriTemplate.indexOf('{', from);
    if (start < 0) return out;
    const close = uriTemplate.indexOf('}', start);
    if (close < 0) return out;
    const op = start + 1 < close ? (uriTemplate[start + 1] as string) : '';
    const operator = '+#./;?&'.includes(op) ? op : '';
    out.push({
      start,
      end: close + 1,
      operator,
      varList: uriTemplate.slice(start + 1 + operator.length, close),
    });
    from = close + 1;
  }
}

/**
 * A test of whether `uri` is one the template expands to, the same as templateMatcher's:
 * literal prefix and suffix compared, the text between them tested by expressionTest when the
 * template has a single expression; otherwise the pattern, compiled at its first use.
 */
export function uriTemplateTest(uriTemplate: string): (uri: string) => boolean {
  const expressions = expressionsOf(uriTemplate);
  if (expressions.length === 0) return (uri) => uri === uriTemplate;
  if (expressions.length === 1) {
    const { start, end, operator, varList } = expressions[0] as Expression;
    const prefix = uriTemplate.slice(0, start);
    const suffix = uriTemplate.slice(end);
    const middle = expressionTest(operator, varList);
    return (uri) =>
      uri.length >= prefix.length + suffix.length &&
      uri.startsWith(prefix) &&
      uri.endsWith(suffix) &&
      middle(uri.slice(prefix.length, uri.length - suffix.length));
  }
  let pattern: UriMatcher | undefined;
  return (uri) => (pattern ??= templateMatcher(uriTemplate)).test(uri);
}

function reversed(text: string): string {
  let out = '';
  for (let i = text.length - 1; i >= 0; i--) out += text[i];
  return out;
}

/** One distinct template of the index. */
interface IndexedTemplate<T> {
  /** Its place in source order (the first source, then its upstream's order, is 0). */
  readonly order: number;
  readonly uriTemplate: string;
  /** uriTemplateTest's, made when the template is first tested (most never are). */
  test?: (uri: string) => boolean;
  readonly value: T;
}

/**
 * URI templates in source order, indexed by their literal prefix (the text before the first
 * expression) and literal suffix (the text after the last one): a URI meets only the
 * templates whose prefix it starts with and whose suffix it ends with, and tests them in
 * source order, so the earliest matching template wins, as a scan of every template in
 * order would find (docs/operations.md §10 "Routing"). A template string listed again
 * (by a later source, or twice by one) is indexed once: its first occurrence always wins.
 * `tests` counts the templates tested against a URI, so the cost can be checked by counting.
 */
export class TemplateIndex<T> {
  /** By literal prefix, then literal suffix: the distinct templates, in source order. */
  private readonly groups = new Map<string, Map<string, IndexedTemplate<T>[]>>();
  private readonly prefixes: PrefixChains;
  /** Literal suffixes, each reversed: a URI's suffixes are the prefixes of its reverse. */
  private readonly suffixes: PrefixChains;
  /** Templates tested against a URI so far (uriTemplateTest calls). */
  tests = 0;

  /** @param templates every template in source order, with the value a match returns */
  constructor(templates: readonly { readonly uriTemplate: string; readonly value: T }[]) {
    const seen = new Set<string>();
    for (let order = 0; order < templates.length; order++) {
      const { uriTemplate, value } = templates[order]!;
      if (seen.has(uriTemplate)) continue;
      seen.add(uriTemplate);
      const { prefix, suffix } = literalEnds(uriTemplate);
      let bySuffix = this.groups.get(prefix);
      if (bySuffix === undefined) {
        bySuffix = new Map();
        this.groups.set(prefix, bySuffix);
      }
      let group = bySuffix.get(suffix);
      if (group === undefined) {
        group = [];
        bySuffix.set(suffix, group);
      }
      group.push({ order, uriTemplate, value });
    }
    this.prefixes = new PrefixChains(this.groups.keys());
    const allSuffixes = new Set<string>();
    for (const bySuffix of this.groups.values())
      for (const suffix of bySuffix.keys()) allSuffixes.add(reversed(suffix));
    this.suffixes = new PrefixChains(allSuffixes);
  }

  /** The value of the first template (in source order) before `end` that matches `uri`. */
  firstMatch(uri: string, end = Number.POSITIVE_INFINITY): T | undefined {
    const prefixes = this.prefixes.prefixesOf(uri);
    if (prefixes.length === 0) return undefined;
    const suffixes = this.suffixes.prefixesOf(reversed(uri)).map(reversed);
    if (suffixes.length === 0) return undefined;
    const candidates: IndexedTemplate<T>[] = [];
    for (const prefix of prefixes) {
      const bySuffix = this.groups.get(prefix) as Map<string, IndexedTemplate<T>[]>;
      const take = (suffix: string, group: readonly IndexedTemplate<T>[]): void => {
        // the prefix and the suffix are distinct parts of the template: both fit in the URI
        if (prefix.length + suffix.length > uri.length) return;
        for (const t of group) {
          if (t.order >= end) break;
          candidates.push(t);
        }
      };
      if (bySuffix.size <= suffixes.length) {
        for (const [suffix, group] of bySuffix) if (uri.endsWith(suffix)) take(suffix, group);
      } else {
        for (const suffix of suffixes) {
          const group = bySuffix.get(suffix);
          if (group !== undefined) take(suffix, group);
        }
      }
    }
    if (candidates.length > 1) candidates.sort((a, b) => a.order - b.order);
    for (const t of candidates) {
      this.tests++;
      t.test ??= uriTemplateTest(t.uriTemplate);
      if (t.test(uri)) return t.value;
    }
    return undefined;
  }
}

/**
 * The literal text before a template's first `{…}` expression and after its last one (as
 * templateMatcher reads expressions); a template without any is all prefix, suffix "".
 */
export function literalEnds(uriTemplate: string): { prefix: string; suffix: string } {
  const expressions = expressionsOf(uriTemplate);
  const first = expressions[0];
  const last = expressions[expressions.length - 1];
  if (first === undefined || last === undefined) return { prefix: uriTemplate, suffix: '' };
  return { prefix: uriTemplate.slice(0, first.start), suffix: uriTemplate.slice(last.end) };
}

/**
 * How many URI templates of one source (one list of one upstream) a single URI may meet in
 * the index; templates past it are left out of that source's published templates
 * (docs/operations.md §10 "Routing"). The templates a URI meets have literal prefixes that
 * are all prefixes of the URI, so nested, and likewise their suffixes; without this bound a
 * source could list 10,000 templates a URI meets (`{a}-0-{b}`, `{a}-1-{b}`, …, all with the
 * prefix and suffix ""), and each URI of every later source would test all of them at every
 * publication. Generous: a server's templates that share their literal start and end, or
 * whose starts and ends nest, number a few, not hundreds.
 */
export const MAX_TEMPLATES_ONE_URI_MEETS = 256;

/** Counts by position: point add and prefix sum (Fenwick tree). */
class Counts {
  private readonly tree: Int32Array;
  constructor(size: number) {
    this.tree = new Int32Array(size + 1);
  }
  add(at: number, delta: number): void {
    for (let i = at + 1; i < this.tree.length; i += i & -i) this.tree[i]! += delta;
  }
  /** The sum over positions [0, end). */
  before(end: number): number {
    let sum = 0;
    for (let i = end; i > 0; i -= i & -i) sum += this.tree[i] as number;
    return sum;
  }
}

/**
 * Kept templates, by one literal end (prefix, or suffix reversed): how many of them have an
 * end that nests with a given one (is a prefix of it, or has it as a prefix). The distinct
 * ends are sorted; the ends that start with one are the run of sorted positions from it up
 * to `runEnd`, so both counts are range sums.
 */
class NestingCounts {
  private readonly position = new Map<string, number>();
  private readonly runEnd: Int32Array;
  /** Kept templates whose end is exactly the one at a position. */
  private readonly at: Counts;
  /** +1 over the run of each kept template's end: at a position, the kept ends that are its prefixes. */
  private readonly covering: Counts;

  constructor(ends: readonly string[]) {
    const sorted = [...new Set(ends)].sort();
    sorted.forEach((s, i) => this.position.set(s, i));
    this.runEnd = new Int32Array(sorted.length).fill(sorted.length);
    const stack: number[] = [];
    for (let i = 0; i < sorted.length; i++) {
      const s = sorted[i] as string;
      while (stack.length > 0 && !s.startsWith(sorted[stack[stack.length - 1] as number]!))
        this.runEnd[stack.pop() as number] = i;
      stack.push(i);
    }
    this.at = new Counts(sorted.length);
    this.covering = new Counts(sorted.length + 1);
  }

  /** Kept templates whose end is a prefix of `end`, or starts with it (each counted once). */
  nesting(end: string): number {
    const i = this.position.get(end) as number;
    const exact = this.at.before(i + 1) - this.at.before(i);
    const extending = this.at.before(this.runEnd[i] as number) - this.at.before(i);
    return this.covering.before(i + 1) + extending - exact;
  }

  keep(end: string): void {
    const i = this.position.get(end) as number;
    this.at.add(i, 1);
    this.covering.add(i, 1);
    this.covering.add(this.runEnd[i] as number, -1);
  }
}

/**
 * Which of one source's templates (in its order) the index takes, so that no URI meets more
 * than `cap` of them: a template is left out when `cap` templates kept before it have literal
 * prefixes nesting with its own, and `cap` have suffixes nesting with its own. Enough: the
 * templates one URI meets nest pairwise at both ends, so the last kept of them had all the
 * others before it at both ends, fewer than `cap`. Distinct templates only (a repeat is
 * left out as listed twice before this). O(n log n).
 * @returns for each template, undefined when kept, else its literal ends (for the reason)
 */
export function templatesBeyondReach(
  uriTemplates: readonly string[],
  cap = MAX_TEMPLATES_ONE_URI_MEETS,
): ({ readonly prefix: string; readonly suffix: string } | undefined)[] {
  if (uriTemplates.length <= cap) return uriTemplates.map(() => undefined);
  const ends = uriTemplates.map((t) => {
    const { prefix, suffix } = literalEnds(t);
    return { prefix, suffix, reversedSuffix: reversed(suffix) };
  });
  const prefixes = new NestingCounts(ends.map((e) => e.prefix));
  const suffixes = new NestingCounts(ends.map((e) => e.reversedSuffix));
  return ends.map(({ prefix, suffix, reversedSuffix }) => {
    if (prefixes.nesting(prefix) >= cap && suffixes.nesting(reversedSuffix) >= cap)
      return { prefix, suffix };
    prefixes.keep(prefix);
    suffixes.keep(reversedSuffix);
    return undefined;
  });
}
