import type { UpstreamDefinition } from '@app/config';
import { SchemaChecker } from '../manifest/schema-checker';
import { acceptUpstreamLists } from '../upstream/upstream-contribution';
import type { UpstreamLists } from '../upstream/upstream-pull-result';
import { CatalogExtras, templateMatcher } from './catalog-extras';
import { MAX_TEMPLATES_ONE_URI_MEETS } from './template-index';

function upstream(id: string): UpstreamDefinition {
  return {
    id,
    url: `http://${id}.internal:3000/mcp`,
    namePrefix: `${id}__`,
    enabled: true,
    protocol: 'auto',
    lists: 'snapshot',
    connectMillis: 100,
    listMillis: 1000,
    callMillis: 5000,
    forwardHeaders: [],
    authorization: { mode: 'none' },
  };
}

function lists(partial: Partial<UpstreamLists>): UpstreamLists {
  return {
    era: '2025',
    capabilities: { resources: {} },
    tools: [],
    resources: [],
    resourceTemplates: [],
    prompts: [],
    ...partial,
  };
}

const matches = (template: string, uri: string): boolean => templateMatcher(template).test(uri);

describe('a URI template covers every URI it expands to (RFC 6570 operators)', () => {
  it('{/x} expands to /value: p://r{/x} covers p://r/victim (and p://r, x undefined), one segment only', () => {
    expect(matches('p://r{/x}', 'p://r/victim')).toBe(true);
    expect(matches('p://r{/x}', 'p://r')).toBe(true);
    expect(matches('p://r{/x}', 'p://r/a/b')).toBe(false);
    expect(matches('p://r{/x}', 'p://rvictim')).toBe(false);
  });

  it('{/x,y} writes one /segment per variable; {/x*} any number', () => {
    expect(matches('p://r{/x,y}', 'p://r/a/b')).toBe(true);
    expect(matches('p://r{/x,y}', 'p://r/a')).toBe(true);
    expect(matches('p://r{/x,y}', 'p://r/a/b/c')).toBe(false);
    expect(matches('p://r{/x*}', 'p://r/a/b/c')).toBe(true);
  });

  it('{?x} and {&x} expand to ?x=… and &x=…, never past a /', () => {
    expect(matches('p://r{?x}', 'p://r?x=1')).toBe(true);
    expect(matches('p://r{?x,y}', 'p://r?x=1&y=2')).toBe(true);
    expect(matches('p://r{?x}', 'p://r')).toBe(true);
    expect(matches('p://r{?x}', 'p://r/victim')).toBe(false);
    expect(matches('p://r?a=1{&x}', 'p://r?a=1&x=2')).toBe(true);
    expect(matches('p://r?a=1{&x}', 'p://r?a=1/victim')).toBe(false);
  });

  it('{#x} expands to #fragment (reserved, may span /); {+x} to reserved characters', () => {
    expect(matches('p://r{#x}', 'p://r#a/b')).toBe(true);
    expect(matches('p://r{#x}', 'p://r/victim')).toBe(false);
    expect(matches('p://r/{+x}', 'p://r/a/b')).toBe(true);
  });

  it('{.x} expands to .label and {;x} to ;x=value, neither past a /', () => {
    expect(matches('p://r/file{.ext}', 'p://r/file.txt')).toBe(true);
    expect(matches('p://r/file{.ext}', 'p://r/file.tar.gz')).toBe(true);
    expect(matches('p://r/file{.ext}', 'p://r/file/x')).toBe(false);
    expect(matches('p://r{;x,y}', 'p://r;x=1;y=2')).toBe(true);
    expect(matches('p://r{;x}', 'p://r;x=1/victim')).toBe(false);
  });

  it('a simple {x} still matches one non-empty segment', () => {
    expect(matches('p://r/{x}', 'p://r/a')).toBe(true);
    expect(matches('p://r/{x}', 'p://r/')).toBe(false);
    expect(matches('p://r/{x}', 'p://r/a/b')).toBe(false);
  });

  it('a later source listing a URI an earlier {/x} template covers is a conflict: the earlier source keeps it', () => {
    const checker = new SchemaChecker();
    const tpl = acceptUpstreamLists(
      upstream('tpl'),
      lists({ resourceTemplates: [{ uriTemplate: 'p://r{/x}', name: 'any' }] }),
      checker,
    );
    const hj = acceptUpstreamLists(
      upstream('hj'),
      lists({ resources: [{ uri: 'p://r/victim', name: 'stolen' }] }),
      checker,
    );
    const extras = CatalogExtras.build([tpl, hj], false);
    expect(extras.resourceOwner('p://r/victim')?.id).toBe('tpl');
    expect(extras.conflicts).toEqual([
      { uri: 'p://r/victim', keptBy: 'tpl', droppedFrom: 'hj', template: 'p://r{/x}' },
    ]);
  });
});

describe('template coverage at publication: each URI meets only the templates whose literal prefix and suffix it has', () => {
  const checker = new SchemaChecker();
  const templates = (id: string, uriTemplates: readonly string[]) =>
    acceptUpstreamLists(
      upstream(id),
      lists({ resourceTemplates: uriTemplates.map((uriTemplate) => ({ uriTemplate, name: 't' })) }),
      checker,
    );
  const listing = (id: string, uris: readonly string[], definition = upstream(id)) =>
    acceptUpstreamLists(
      definition,
      lists({ resources: uris.map((uri) => ({ uri, name: 'r' })) }),
      checker,
    );

  it('10,000 templates and 10,000 resources of another source: templates tested stay near the resource count, not 10^8', () => {
    const n = 10_000;
    const tpl = templates(
      'tpl',
      Array.from({ length: n }, (_, i) => `t${i}://r/{x}`),
    );
    // every other resource is covered by its own scheme's template, the rest by none
    const res = listing(
      'res',
      Array.from({ length: n }, (_, i) => (i % 2 === 0 ? `t${i}://r/item` : `r${i}://r/item`)),
    );
    const extras = CatalogExtras.build([tpl, res], false);
    expect(extras.conflicts).toHaveLength(n / 2);
    expect(extras.conflicts[0]).toEqual({
      uri: 't0://r/item',
      keptBy: 'tpl',
      droppedFrom: 'res',
      template: 't0://r/{x}',
    });
    // each covered resource meets its own scheme's template only ("t1://r/" starts no
    // "t10://…"), the others meet none: a scan of every template would test 10^8 pairs
    expect(extras.coverageTests).toBe(n / 2);
    expect(extras.resourceOwner('t9998://r/x')?.id).toBe('tpl');
    expect(extras.resourceOwner('r9999://r/item')?.id).toBe('res');
    expect(JSON.parse(extras.resourcesJson)).toHaveLength(n / 2);
  });

  it('10,000 templates sharing their literal start and end ({a}-0-{b}, {a}-1-{b}, …) and 10,000 resources of a later source: the first 256 are published, each resource tests at most 256', () => {
    const n = 10_000;
    const cap = MAX_TEMPLATES_ONE_URI_MEETS;
    const tpl = templates(
      'tpl',
      Array.from({ length: n }, (_, i) => `{a}-${i}-{b}`),
    );
    expect(tpl.resourceTemplates).toHaveLength(cap);
    expect(tpl.leftOut).toHaveLength(n - cap);
    expect(tpl.leftOut[0]).toEqual({
      list: 'resourceTemplates',
      name: `{a}-${cap}-{b}`,
      reason: `a URI could meet more than ${cap} of this upstream's templates: ${cap} listed before it have literal starts and ends nesting with its "" and ""`,
    });
    // x-5-y: covered by the kept {a}-5-{b}; x-9999-y only by a left-out template: not covered
    const res = listing('res', [
      'x-5-y',
      'x-9999-y',
      ...Array.from({ length: n - 2 }, (_, i) => `res:${i}`),
    ]);
    const extras = CatalogExtras.build([tpl, res], false);
    expect(extras.conflicts).toEqual([
      { uri: 'x-5-y', keptBy: 'tpl', droppedFrom: 'res', template: '{a}-5-{b}' },
    ]);
    expect(extras.resourceOwner('x-9999-y')?.id).toBe('res');
    // near-linear: a scan of every template would test 10^8 pairs
    expect(extras.coverageTests).toBeLessThanOrEqual(n * cap);
    expect(JSON.parse(extras.resourceTemplatesJson)).toHaveLength(cap);
  });

  it('of several sources whose templates match, the earliest source wins, whatever their literal prefixes', () => {
    const a = templates('a', ['p://{+rest}']);
    const b = templates('b', ['p://r/{x}']);
    const c = templates('c', ['p://r/k{?q}']);
    const d = listing('d', ['p://r/k']);
    const extras = CatalogExtras.build([a, b, c, d], false);
    expect(extras.resourceOwner('p://r/k')?.id).toBe('a');
    expect(extras.conflicts).toEqual([
      { uri: 'p://r/k', keptBy: 'a', droppedFrom: 'd', template: 'p://{+rest}' },
    ]);
    const reversed = CatalogExtras.build([c, b, a, d], false);
    expect(reversed.resourceOwner('p://r/k')?.id).toBe('c');
    expect(reversed.resourceOwner('p://r/other')?.id).toBe('b');
    expect(reversed.resourceOwner('p://r/a/b')?.id).toBe('a');
    expect(reversed.conflicts).toEqual([
      { uri: 'p://r/k', keptBy: 'c', droppedFrom: 'd', template: 'p://r/k{?q}' },
    ]);
    // a listing before every template keeps its URI; the templates route the rest
    const listedFirst = CatalogExtras.build([d, c, a], false);
    expect(listedFirst.conflicts).toEqual([]);
    expect(listedFirst.resourceOwner('p://r/k')?.id).toBe('d');
    expect(listedFirst.resourceOwner('p://r/k?q=1')?.id).toBe('c');
    expect(listedFirst.resourceOwner('p://r/z')?.id).toBe('a');
  });

  it("{+x} spans /: a later listing under it is a conflict, and a source's own template never conflicts with its listing", () => {
    const files = acceptUpstreamLists(
      upstream('files'),
      lists({
        resources: [{ uri: 'files://a/b/c', name: 'own' }],
        resourceTemplates: [{ uriTemplate: 'files://{+path}', name: 'any' }],
      }),
      checker,
    );
    const later = listing('later', ['files://x/y/z', 'files://', 'other://x']);
    const extras = CatalogExtras.build([files, later], false);
    expect(extras.conflicts).toEqual([
      { uri: 'files://x/y/z', keptBy: 'files', droppedFrom: 'later', template: 'files://{+path}' },
    ]);
    expect(extras.resourceOwner('files://deep/er/path')?.id).toBe('files');
    // {+x} matches one character or more: files:// itself stays with the source that lists it
    expect(extras.resourceOwner('files://')?.id).toBe('later');
    expect(JSON.parse(extras.resourcesJson).map((r: { uri: string }) => r.uri)).toEqual([
      'files://a/b/c',
      'files://',
      'other://x',
    ]);
  });

  it("an identical template in two sources: the first routes, both are listed, a third source's URI under it is kept by the first", () => {
    const a = templates('a', ['dup://{x}']);
    const b = acceptUpstreamLists(
      upstream('b'),
      lists({
        resources: [{ uri: 'dup://mine', name: 'b' }],
        resourceTemplates: [{ uriTemplate: 'dup://{x}', name: 't' }],
      }),
      checker,
    );
    const c = listing('c', ['dup://k']);
    const extras = CatalogExtras.build([a, b, c], false);
    expect(extras.resourceOwner('dup://anything')?.id).toBe('a');
    expect(extras.conflicts).toEqual([
      { uri: 'dup://mine', keptBy: 'a', droppedFrom: 'b', template: 'dup://{x}' },
      { uri: 'dup://k', keptBy: 'a', droppedFrom: 'c', template: 'dup://{x}' },
    ]);
    expect(JSON.parse(extras.resourceTemplatesJson)).toHaveLength(2);
    // each URI tested against the template once, not once per source listing it
    expect(extras.coverageTests).toBe(2);
  });
});

describe('a lists: live upstream routes by its catalog copy (docs/operations.md §11 "Live lists")', () => {
  const checker = new SchemaChecker();
  const live = (id: string): UpstreamDefinition => ({ ...upstream(id), lists: 'live' });

  it("its catalog copy's template keeps a URI a later source lists; the copy is not listed, a caller's live answer is", () => {
    const copy = acceptUpstreamLists(
      live('tpl'),
      lists({
        resources: [{ uri: 'tpl://listed', name: 'l' }],
        resourceTemplates: [{ uriTemplate: 'tpl://{x}', name: 'any' }],
      }),
      checker,
    );
    const hj = acceptUpstreamLists(
      upstream('hj'),
      lists({
        resources: [
          { uri: 'tpl://victim', name: 'stolen' },
          { uri: 'hj://own', name: 'own' },
        ],
      }),
      checker,
    );
    const extras = CatalogExtras.build([copy, hj], false);
    expect(extras.resourceOwner('tpl://victim')?.id).toBe('tpl');
    expect(extras.resourceOwner('tpl://listed')?.id).toBe('tpl');
    expect(extras.conflicts).toEqual([
      { uri: 'tpl://victim', keptBy: 'tpl', droppedFrom: 'hj', template: 'tpl://{x}' },
    ]);
    expect(JSON.parse(extras.resourcesJson).map((r: { uri: string }) => r.uri)).toEqual([
      'hj://own',
    ]);
    expect(extras.resourceTemplatesJson).toBe('[]');
    expect([...extras.listed().resourceTemplates]).toEqual([]);

    // the caller's live answer is listed in its place; the copy still routes
    const answer = acceptUpstreamLists(
      live('tpl'),
      lists({
        resources: [
          { uri: 'tpl://listed', name: 'l' },
          { uri: 'tpl://caller', name: 'c' },
        ],
      }),
      checker,
    );
    const merged = CatalogExtras.build([copy, hj], false, new Map([['tpl', answer]]));
    expect(JSON.parse(merged.resourcesJson).map((r: { uri: string }) => r.uri)).toEqual([
      'tpl://listed',
      'tpl://caller',
      'hj://own',
    ]);
    expect(merged.conflicts).toEqual(extras.conflicts);
  });
});
