import { renderProblem, type ConfigProblem } from './config-problem';
import { expandEnvPlaceholders } from './env-placeholders';

describe('expandEnvPlaceholders: ${NAME} and ${NAME:default} in config strings', () => {
  it('replaces a set variable and keeps the rest of the string', () => {
    const problems: ConfigProblem[] = [];
    const out = expandEnvPlaceholders(
      { mcp: { bundles: [{ manifestUrl: 'http://127.0.0.1:${SAMPLE_PORT:8081}/tool-manifest' }] } },
      { SAMPLE_PORT: '18081' },
      problems,
    );
    expect(out).toEqual({
      mcp: { bundles: [{ manifestUrl: 'http://127.0.0.1:18081/tool-manifest' }] },
    });
    expect(problems).toEqual([]);
  });

  it('uses the default when the variable is unset or empty', () => {
    const problems: ConfigProblem[] = [];
    expect(expandEnvPlaceholders({ a: '${X:8081}', b: '${Y:}' }, { Y: '' }, problems)).toEqual({
      a: '8081',
      b: '',
    });
    expect(problems).toEqual([]);
  });

  it('names the field of every unset variable without a default', () => {
    const problems: ConfigProblem[] = [];
    expandEnvPlaceholders(
      { mcp: { identity: '${GW_ID}', list: ['ok', '${OTHER}'] } },
      {},
      problems,
    );
    expect(problems.map(renderProblem)).toEqual([
      'mcp.identity: ${GW_ID} names an environment variable that is not set',
      'mcp.list[1]: ${OTHER} names an environment variable that is not set',
    ]);
  });

  it('keeps $${ as a literal ${ and leaves numbers, booleans and keys alone', () => {
    const problems: ConfigProblem[] = [];
    expect(
      expandEnvPlaceholders({ '${K}': 1, b: true, s: 'cost $${PRICE}' }, { K: 'x' }, problems),
    ).toEqual({ '${K}': 1, b: true, s: 'cost ${PRICE}' });
    expect(problems).toEqual([]);
  });

  it('does not expand what a variable expands to (one pass)', () => {
    const problems: ConfigProblem[] = [];
    expect(expandEnvPlaceholders({ a: '${A}' }, { A: '${B}', B: 'no' }, problems)).toEqual({
      a: '${B}',
    });
  });
});
