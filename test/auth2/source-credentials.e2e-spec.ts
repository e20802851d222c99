import { decodeJwt } from 'jose';
import type { TokenExchangeAuthorization } from '@app/config';
import { SourceCredentialError, SourceCredentials, type CallerIdentity } from '@app/identity';
import { TestAuthorizationServer } from '../support/oidc-provider';

const GATEWAY = 'http://127.0.0.1:1/mcp';
const SOURCE = 'https://tools.internal.example/mcp';
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const CLIENT = {
  client_id: 'gateway',
  client_secret: 'gateway-secret',
  grant_types: ['client_credentials', TOKEN_EXCHANGE],
};

function callerOf(token: string): CallerIdentity {
  return { subject: 'alice', scopes: [], claims: {}, token };
}

// docs/operations.md §14 "Credentials towards sources": SourceCredentials against a real
// authorization server (oidc-provider 9 with the RFC 8693 grant of
// test/support/token-exchange-grant.mjs).
describe('SourceCredentials: token exchange towards a source (docs/operations.md §14 "Credentials towards sources")', () => {
  let as: TestAuthorizationServer;
  let auth: TokenExchangeAuthorization;
  beforeAll(async () => {
    as = await TestAuthorizationServer.start({
      clients: [CLIENT],
      resources: { [GATEWAY]: { scope: 'mcp' }, [SOURCE]: { scope: 'tools', ttlSeconds: 300 } },
      defaultResource: GATEWAY,
    });
    auth = {
      mode: 'tokenExchange',
      tokenEndpoint: as.tokenUrl,
      clientId: CLIENT.client_id,
      clientSecret: CLIENT.client_secret,
      audience: SOURCE,
    };
  });
  afterAll(() => as.stop());

  it("exchanges the caller's token for one whose audience is the source, the user as sub and the gateway as actor", async () => {
    const user = await as.mint({ subject: 'alice', claims: { groups: ['claims-team'] } });
    const issued = await new SourceCredentials().forCaller(auth, callerOf(user.access_token));
    expect(issued).not.toBe(user.access_token);
    expect(decodeJwt(issued)).toMatchObject({
      iss: as.issuer,
      aud: SOURCE,
      sub: 'alice',
      act: { sub: 'gateway' },
    });
    expect(decodeJwt(user.access_token).aud).toBe(GATEWAY);
  });

  it('caches the exchanged token per caller token and asks once for concurrent requests (single flight)', async () => {
    const credentials = new SourceCredentials();
    const alice = await as.mint({ subject: 'alice' });
    const bob = await as.mint({ subject: 'bob' });
    const before = (await as.counters()).exchange;
    const tokens = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        credentials.forCaller(auth, callerOf(i % 2 === 0 ? alice.access_token : bob.access_token)),
      ),
    );
    expect((await as.counters()).exchange - before).toBe(2);
    expect(new Set(tokens).size).toBe(2);
    expect(await credentials.forCaller(auth, callerOf(alice.access_token))).toBe(tokens[0]);
    expect((await as.counters()).exchange - before).toBe(2);
    expect(tokens.map((t) => decodeJwt(t).sub).sort()).toEqual([
      'alice',
      'alice',
      'alice',
      'alice',
      'bob',
      'bob',
      'bob',
      'bob',
    ]);
  });

  it('asks again once the cached token is close to its expiry', async () => {
    let now = 0;
    const credentials = new SourceCredentials(() => now);
    const user = await as.mint({ subject: 'carol' });
    const before = (await as.counters()).exchange;
    const first = await credentials.forCaller(auth, callerOf(user.access_token));
    now = 240_000; // 300 s lifetime, 30 s margin: still fresh at 240 s
    expect(await credentials.forCaller(auth, callerOf(user.access_token))).toBe(first);
    expect((await as.counters()).exchange - before).toBe(1);
    now = 271_000; // within the margin
    await credentials.forCaller(auth, callerOf(user.access_token));
    expect((await as.counters()).exchange - before).toBe(2);
  });

  it('a refused exchange is a SourceCredentialError naming the refusal and never a token or secret', async () => {
    const user = await as.mint({ subject: 'alice' });
    const wrong = { ...auth, clientSecret: 'not-the-secret' };
    const failure = await new SourceCredentials()
      .forCaller(wrong, callerOf(user.access_token))
      .catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(SourceCredentialError);
    const message = (failure as Error).message;
    expect(message).toMatch(
      /token exchange: the authorization server refused \(HTTP 401 invalid_client\)/,
    );
    expect(message).not.toContain(user.access_token);
    expect(message).not.toContain('not-the-secret');
    expect(message).not.toContain(String(as.port));
  });

  it('a forged subject token is refused (invalid_grant), and a failure is not cached', async () => {
    const credentials = new SourceCredentials();
    await expect(credentials.forCaller(auth, callerOf('not.a.jwt'))).rejects.toThrow(
      /HTTP 400 invalid_grant/,
    );
    const user = await as.mint({ subject: 'dave' });
    await expect(credentials.forCaller(auth, callerOf(user.access_token))).resolves.toEqual(
      expect.any(String),
    );
  });

  it('without a caller there is nothing to exchange: a clear error, no request', async () => {
    const before = (await as.counters()).token;
    await expect(new SourceCredentials().forCaller(auth, undefined)).rejects.toThrow(
      /no caller token to exchange/,
    );
    expect((await as.counters()).token).toBe(before);
  });

  it("list pulls get the gateway's own client-credentials token for the source's audience", async () => {
    const credentials = new SourceCredentials();
    const token = await credentials.forGateway(auth);
    // no user behind it: the client itself is the subject
    expect(decodeJwt(token)).toMatchObject({ aud: SOURCE, client_id: 'gateway', sub: 'gateway' });
    expect(await credentials.forGateway(auth)).toBe(token);
  });

  it('an unreachable token endpoint is a clear error without its address', async () => {
    const down = { ...auth, tokenEndpoint: 'http://127.0.0.1:9/token' };
    const failure = await new SourceCredentials()
      .forGateway(down)
      .catch((err: unknown) => err as Error);
    expect(failure).toBeInstanceOf(SourceCredentialError);
    expect((failure as Error).message).toBe(
      'client credentials: the authorization server could not be reached',
    );
  });

  // docs/operations.md §15 "Deleted means gone": the cache is keyed by every field the token
  // request sends, the client secret as a digest. A configuration whose secret the authorization
  // server refuses (a registration posted again under its id with another secret, a rotated
  // one) never gets the token another configuration of the same audience was issued.
  it('a configuration with a secret the authorization server refuses gets no token, even after one of the same audience got one', async () => {
    const credentials = new SourceCredentials();
    const user = await as.mint({ subject: 'alice' });
    expect(typeof (await credentials.forCaller(auth, callerOf(user.access_token)))).toBe('string');
    const wrong = { ...auth, clientSecret: 'not-the-secret' };
    await expect(credentials.forCaller(wrong, callerOf(user.access_token))).rejects.toThrow(
      SourceCredentialError,
    );
    // the gateway's own token (list pulls) likewise
    await credentials.forGateway(auth);
    await expect(credentials.forGateway(wrong)).rejects.toThrow(SourceCredentialError);
  });
});
