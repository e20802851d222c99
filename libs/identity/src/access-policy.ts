import type { AccessConfig, AccessMatchConfig } from '@app/config';
import { callerSubject, type CallerIdentity } from './caller-identity';

/**
 * What one caller may use (docs/operations.md §13 "Access"), computed from its token alone on every
 * request. `all`: no `mcp.access` configured (or no auth), everything is visible and the prebuilt
 * lists are served. Otherwise the union of the matching rules' grants; `key` names that
 * union (equal keys: equal grants), so filtered lists can be built once per catalog and key.
 */
export type CallerAccess =
  | { readonly all: true }
  | {
      readonly all: false;
      readonly key: string;
      /** Source ids (bundle or upstream) granted whole. */
      readonly sources: ReadonlySet<string>;
      /** Published tool names granted one by one. */
      readonly tools: ReadonlySet<string>;
      /**
       * The virtual server this grant was narrowed to (docs/operations.md §16), so that a
       * stream's recheck narrows the caller's fresh grant the same way.
       */
      readonly server?: string;
      /**
       * With `server`: the caller's grant before it was narrowed (undefined: everything), for a
       * tool the view cannot list now (one held for review, docs/operations.md §6).
       */
      readonly granted?: CallerAccess;
      /**
       * With `server`: the catalog `tools` was resolved against (a view by tags or name patterns
       * is resolved per catalog, docs/operations.md §16); a list is built from this grant and
       * kept under `key` for that catalog only. Opaque here.
       */
      readonly resolvedFor?: object;
    };

export const FULL_ACCESS: CallerAccess = { all: true };

/** Whether the caller may see and call this tool (source granted, or the tool by name). */
export function allowsTool(access: CallerAccess, sourceId: string, name: string): boolean {
  return access.all || access.sources.has(sourceId) || access.tools.has(name);
}

/** Whether the caller may use this source's prompts, resources and capabilities. */
export function allowsSource(access: CallerAccess, sourceId: string): boolean {
  return access.all || access.sources.has(sourceId);
}

type Matcher = (caller: CallerIdentity) => boolean;

function compileMatch(match: AccessMatchConfig): Matcher {
  if (match.subject !== undefined) {
    const subject = match.subject;
    // a user's subject: a client's own token (client credentials, whose `sub` a provider may set
    // to its client_id) is another caller, matched by `{claim: client_id}` (docs/security.md
    // "Who is a caller")
    return (caller) => callerSubject(caller) === subject;
  }
  if (match.scope !== undefined) {
    const scope = match.scope;
    return (caller) => caller.scopes.includes(scope);
  }
  const claim = match.claim ?? '';
  const value = match.value;
  // a string claim equals the value; an array claim contains it (docs/operations.md §13 "Access")
  return (caller) => {
    const held = caller.claims[claim];
    return held === value || (Array.isArray(held) && held.includes(value));
  };
}

/**
 * `mcp.access.rules` compiled once at boot into matchers; `accessFor` runs them per request
 * and hands out one shared CallerAccess per distinct set of matching rules.
 */
export class AccessPolicy {
  private readonly rules: readonly {
    readonly matches: Matcher;
    readonly sources: readonly string[];
    readonly tools: readonly string[];
  }[];
  /** Granted unions by key ("0,3": rules 0 and 3 matched); at most 2^rules, usually a handful. */
  private readonly unions = new Map<string, CallerAccess>();

  /** @param access `mcp.access` (validated); undefined: everyone sees everything. */
  constructor(access: AccessConfig | undefined) {
    this.rules = (access?.rules ?? []).map((rule) => ({
      matches: compileMatch(rule.match),
      sources: rule.sources,
      tools: rule.tools,
    }));
    this.configured = access !== undefined;
  }

  /** false: no `mcp.access`, every caller gets FULL_ACCESS. */
  readonly configured: boolean;

  /** What this caller may use; FULL_ACCESS without `mcp.access` or without a caller (auth none). */
  accessFor(caller: CallerIdentity | undefined): CallerAccess {
    if (!this.configured || caller === undefined) return FULL_ACCESS;
    let key = '';
    for (let i = 0; i < this.rules.length; i++) {
      if (this.rules[i]?.matches(caller)) key = key === '' ? String(i) : `${key},${i}`;
    }
    let access = this.unions.get(key);
    if (access === undefined) {
      const sources = new Set<string>();
      const tools = new Set<string>();
      for (const i of key === '' ? [] : key.split(',').map(Number)) {
        const rule = this.rules[i];
        for (const s of rule?.sources ?? []) sources.add(s);
        for (const t of rule?.tools ?? []) tools.add(t);
      }
      access = { all: false, key, sources, tools };
      this.unions.set(key, access);
    }
    return access;
  }
}
