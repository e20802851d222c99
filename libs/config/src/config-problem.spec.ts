import 'reflect-metadata';
import { ConfigValidationError } from './config-errors';
import { fieldPath, invalid, isClash, renderProblem } from './config-problem';
import { loadGatewayConfig } from './load-config';

describe('ConfigProblem: rendered to the line the boot prints', () => {
  it('writes path, message and what was given', () => {
    expect(renderProblem(invalid('mcp.session.ttlSeconds', 'must be at least 60'))).toBe(
      'mcp.session.ttlSeconds: must be at least 60',
    );
    expect(renderProblem(invalid('mcp.session.ttlSeconds', 'must be at least 60', '5'))).toBe(
      'mcp.session.ttlSeconds: must be at least 60 (got 5)',
    );
  });

  it('writes a problem of the whole configuration (no path) as its message alone', () => {
    expect(renderProblem(invalid('', 'the configuration could not be read (Error: x)'))).toBe(
      'the configuration could not be read (Error: x)',
    );
  });

  it('names a field under a path, or alone at the top of a registration body', () => {
    expect(fieldPath('mcp.upstreams[1]', 'authorization')).toBe('mcp.upstreams[1].authorization');
    expect(fieldPath('', 'authorization')).toBe('authorization');
  });

  it('calls only the clashes with another source clashes', () => {
    const at = 'mcp.upstreams[0].namePrefix';
    expect(isClash({ path: at, code: 'duplicate-prefix', message: '' })).toBe(true);
    expect(isClash({ path: at, code: 'overlapping-prefix', message: '' })).toBe(true);
    expect(isClash({ path: 'mcp.upstreams[0].id', code: 'duplicate-id', message: '' })).toBe(true);
    expect(isClash({ path: at, code: 'reserved-prefix', message: '' })).toBe(false);
    expect(isClash({ path: at, code: 'shared-empty-prefix', message: '' })).toBe(false);
    expect(isClash(invalid('mcp.upstreams[0].url', 'must be an http(s) URL'))).toBe(false);
  });

  it('reports a shape no rule foresaw as one line about the whole configuration', () => {
    const env = {
      get APP_PROFILE(): string {
        throw new Error('boom');
      },
    };
    let error: unknown;
    try {
      loadGatewayConfig({ env, cwd: '/nonexistent', version: '0.0.0' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigValidationError);
    expect((error as ConfigValidationError).problems).toEqual([
      'the configuration could not be read (Error: boom)',
    ]);
  });
});
