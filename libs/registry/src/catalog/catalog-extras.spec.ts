import type { UpstreamDefinition } from '@app/config';
import { SchemaChecker } from '../manifest/schema-checker';
import { acceptUpstreamLists } from '../upstream/upstream-contribution';
import type { UpstreamLists } from '../upstream/upstream-pull-result';
import { CatalogExtras, templateMatcher } from './catalog-extras';

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
