import type { GatewayConfig } from '@app/config';
import { HttpAccessPolicy } from './http-access.policy';

/** Only the fields the policy reads. */
function policy(http: { allowedOrigins?: string[]; allowedHosts?: string[] }): HttpAccessPolicy {
  const config = {
    mcp: { http: { allowedOrigins: [], allowedHosts: [], ...http } },
  } as unknown as GatewayConfig;
  return new HttpAccessPolicy(config);
}

const FORBIDDEN_BODY = {
  jsonrpc: '2.0',
  id: null,
  error: { code: -32000, message: expect.stringMatching(/^Forbidden: /) },
};

function refusal(decision: ReturnType<HttpAccessPolicy['admit']>): unknown {
  if (decision.kind !== 'refuse') return decision;
  const { status, headers, body } = decision.answer;
  return { status, headers, body: JSON.parse(body as string) };
}

describe('HttpAccessPolicy: Origin (MCP Streamable HTTP: an invalid Origin gets 403; docs/operations.md §8)', () => {
  it('refuses Origin: http://evil.example by default with 403 and a JSON-RPC error without id', () => {
    expect(refusal(policy({}).admit({ origin: 'http://evil.example' }))).toEqual({
      status: 403,
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: FORBIDDEN_BODY,
    });
  });

  it('passes a request without Origin, with no CORS header (every non-browser client)', () => {
    expect(policy({}).admit({ 'content-type': 'application/json' })).toEqual({ kind: 'pass' });
  });

  it('passes a listed origin with its CORS headers', () => {
    const decision = policy({ allowedOrigins: ['https://app.example'] }).admit({
      origin: 'https://app.example',
    });
    expect(decision).toEqual({
      kind: 'pass',
      cors: {
        'access-control-allow-origin': 'https://app.example',
        vary: 'Origin',
        'access-control-expose-headers': 'Mcp-Session-Id',
      },
    });
  });

  it('refuses Origin: null unless "null" is listed', () => {
    expect(policy({ allowedOrigins: ['http://a.example'] }).admit({ origin: 'null' }).kind).toBe(
      'refuse',
    );
    expect(policy({ allowedOrigins: ['null'] }).admit({ origin: 'null' }).kind).toBe('pass');
  });

  it('refuses an Origin that is not an origin at all', () => {
    const allowAll = policy({ allowedOrigins: ['http://a.example:*'] });
    for (const origin of ['', 'a.example', 'http://a.example:*', 'http://a.example/x']) {
      expect([origin, allowAll.admit({ origin }).kind]).toEqual([origin, 'refuse']);
    }
  });
});

describe('HttpAccessPolicy: Host (DNS rebinding)', () => {
  const checked = policy({ allowedHosts: ['gw.example:8080', 'localhost:*'] });

  it('refuses Host: evil.example:8080 when allowedHosts is set, before looking at Origin', () => {
    expect(refusal(checked.admit({ host: 'evil.example:8080' }))).toEqual({
      status: 403,
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: {
        ...FORBIDDEN_BODY,
        error: { code: -32000, message: expect.stringContaining('Host') },
      },
    });
  });

  it('passes a listed host, any port of a "host:*" entry, and refuses a missing Host', () => {
    expect(checked.admit({ host: 'gw.example:8080' }).kind).toBe('pass');
    expect(checked.admit({ host: 'GW.EXAMPLE:8080' }).kind).toBe('pass');
    expect(checked.admit({ host: 'gw.example:9090' }).kind).toBe('refuse');
    expect(checked.admit({ host: 'localhost:41234' }).kind).toBe('pass');
    expect(checked.admit({}).kind).toBe('refuse');
  });

  it('does not look at Host when allowedHosts is empty', () => {
    expect(policy({}).admit({ host: 'evil.example:8080' })).toEqual({ kind: 'pass' });
  });
});

describe('HttpAccessPolicy: preflight', () => {
  it('answers 204 with methods, headers (MCP, auth and the forwarded caller headers) and max-age', () => {
    const access = policy({ allowedOrigins: ['http://localhost:*'] });
    const decision = access.admit({ origin: 'http://localhost:5173' });
    if (decision.kind !== 'pass' || decision.cors === undefined) throw new Error('not allowed');
    const answer = access.preflight(decision.cors);
    expect(answer.status).toBe(204);
    expect(answer.body).toBeUndefined();
    expect(answer.headers).toEqual({
      'access-control-allow-origin': 'http://localhost:5173',
      vary: 'Origin',
      'access-control-expose-headers': 'Mcp-Session-Id',
      'access-control-allow-methods': 'POST, GET, DELETE, OPTIONS',
      'access-control-allow-headers':
        'content-type, accept, authorization, mcp-session-id, mcp-protocol-version, mcp-method, mcp-name, last-event-id, ' +
        'guid, x-request-id, employee-no, virtual-employee-no',
      'access-control-max-age': '600',
    });
  });
});
