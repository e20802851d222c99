import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT, waitFor } from './gateway-process';

/** A client registered at the test authorization server (oidc-provider client metadata). */
export interface TestClient {
  readonly client_id: string;
  readonly client_secret: string;
  /** Default `['client_credentials']`. */
  readonly grant_types?: readonly string[];
  /** Space-separated scopes the client may ask for (default: any the resource allows). */
  readonly scope?: string;
}

/** How the server issues access tokens for one resource indicator (RFC 8707). */
export interface TestResource {
  /** Space-separated scopes a token for this resource may carry (default `mcp`). */
  readonly scope?: string;
  /** `jwt` (default; signed ES256 with the current key) or `opaque` (introspection only). */
  readonly format?: 'jwt' | 'opaque';
  /** Access token lifetime in seconds (default 600). */
  readonly ttlSeconds?: number;
}

export interface AuthorizationServerOptions {
  /** Clients; default one confidential client `gateway-test` / `gateway-test-secret`. */
  readonly clients?: readonly TestClient[];
  /** Resource indicator URI → token settings. Unlisted resources get 600 s JWTs, scope `mcp`. */
  readonly resources?: Readonly<Record<string, TestResource>>;
  /** Resource used when a request names none. */
  readonly defaultResource?: string;
  /** Extra claims for every client-credentials token of a client (client_id → claims). */
  readonly clientClaims?: Readonly<Record<string, Record<string, unknown>>>;
  /** Fixed port (default a free one). */
  readonly port?: number;
}

/** What `mint` asks for: a user token issued through the provider's own token machinery. */
export interface MintRequest {
  /** The user (`sub`). */
  readonly subject: string;
  /** Resource indicator = the token's `aud` (default: `defaultResource`). */
  readonly resource?: string;
  /** Space-separated scopes (default: all the resource allows). */
  readonly scope?: string;
  /** Extra claims, e.g. `{ groups: ['claims-team'] }`. */
  readonly claims?: Record<string, unknown>;
  /** Issuing client (default: the first client). */
  readonly clientId?: string;
  /** Overrides the resource's token format. */
  readonly format?: 'jwt' | 'opaque';
  readonly ttlSeconds?: number;
  /** Set `exp` / `iat` outright (seconds since the epoch), e.g. an expired JWT. */
  readonly exp?: number;
  readonly iat?: number;
}

export interface MintedToken {
  readonly access_token: string;
  /** The grant behind the token; `revokeGrant(grantId)` makes introspection say inactive. */
  readonly grantId: string;
  readonly expires_in: number;
  readonly scope: string;
}

export const DEFAULT_TEST_CLIENT: TestClient = {
  client_id: 'gateway-test',
  client_secret: 'gateway-test-secret',
};

/**
 * A real OAuth 2.1 authorization server for e2e tests (docs/operations.md §13): oidc-provider 9 in
 * its own Node process on 127.0.0.1 (test/support/oidc-provider-server.mjs). It issues JWT access
 * tokens for a resource indicator (RFC 8707), publishes its keys at `jwksUrl`, answers RFC 7662
 * introspection at `introspectionUrl` and client credentials at `tokenUrl`.
 *
 * Test controls: `mint` (a user token with claims like `groups`), `sign` (any JWT with the
 * provider's key), `revokeGrant`, `rotateKey`
 * (a new signing key; old keys stay published unless dropped), `setJwksDown` (JWKS answers
 * 503), `counters` (how often JWKS / introspection / token were asked).
 */
export class TestAuthorizationServer {
  stdout = '';
  stderr = '';
  port = 0;
  private exitCode: number | null = null;
  private readonly exited: Promise<void>;

  private constructor(private readonly child: ChildProcess) {
    child.stdout?.setEncoding('utf8').on('data', (d: string) => (this.stdout += d));
    child.stderr?.setEncoding('utf8').on('data', (d: string) => (this.stderr += d));
    this.exited = new Promise((resolve) =>
      child.on('close', (code) => {
        this.exitCode = code;
        resolve();
      }),
    );
  }

  static async start(options: AuthorizationServerOptions = {}): Promise<TestAuthorizationServer> {
    const clients = (options.clients ?? [DEFAULT_TEST_CLIENT]).map((c) => ({
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      ...c,
    }));
    const config = {
      port: options.port ?? 0,
      clients,
      resources: options.resources ?? {},
      defaultResource: options.defaultResource,
      clientClaims: options.clientClaims ?? {},
    };
    const child = spawn(process.execPath, [join(__dirname, 'oidc-provider-server.mjs')], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', OIDC_HARNESS_CONFIG: JSON.stringify(config) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const server = new TestAuthorizationServer(child);
    await waitFor(
      () => {
        if (server.exitCode !== null) throw new Error(`oidc exited:\n${server.output}`);
        const match = /oidc listening: (\d+)/.exec(server.stdout);
        if (match) server.port = Number(match[1]);
        return match !== null;
      },
      20_000,
      () => `oidc-provider did not start:\n${server.output}`,
    );
    return server;
  }

  get output(): string {
    return this.stdout + this.stderr;
  }

  /** The issuer (`iss`), also the base of every endpoint. */
  get issuer(): string {
    return `http://127.0.0.1:${this.port}`;
  }
  get jwksUrl(): string {
    return `${this.issuer}/jwks`;
  }
  get tokenUrl(): string {
    return `${this.issuer}/token`;
  }
  get introspectionUrl(): string {
    return `${this.issuer}/token/introspection`;
  }
  get revocationUrl(): string {
    return `${this.issuer}/token/revocation`;
  }

  /** A user access token for `subject`, issued and signed by the provider. */
  async mint(request: MintRequest): Promise<MintedToken> {
    return (await this.control('mint', request)) as MintedToken;
  }

  /**
   * A JWT with exactly these claims, signed with the provider's current key (`typ: at+jwt`
   * unless `header.typ` says otherwise; `null` leaves it out). For shapes the provider never
   * issues itself: no `exp`, `iat` ahead, `typ: JWT`, ID-token claims.
   */
  async sign(
    payload: Record<string, unknown>,
    header: { typ?: string | null } & Record<string, unknown> = {},
  ): Promise<string> {
    const { access_token } = (await this.control('sign', { payload, header })) as {
      access_token: string;
    };
    return access_token;
  }

  /** Revokes a grant: its opaque tokens turn inactive at introspection. */
  async revokeGrant(grantId: string): Promise<void> {
    await this.control('revoke-grant', { grantId });
  }

  /** A new signing key signs from now on; `dropOld` unpublishes the previous keys. */
  async rotateKey(dropOld = false): Promise<{ kid: string; kids: string[] }> {
    return (await this.control('rotate', { dropOld })) as { kid: string; kids: string[] };
  }

  /** While down, GET /jwks answers 503. */
  async setJwksDown(down: boolean): Promise<void> {
    await this.control('jwks-down', { down });
  }

  /** Claims every later client-credentials token of `clientId` carries. */
  async setClientClaims(clientId: string, claims: Record<string, unknown>): Promise<void> {
    await this.control('client-claims', { clientId, claims });
  }

  /** Every RFC 8693 token exchange issued so far (test/support/token-exchange-grant.mjs). */
  async exchanges(): Promise<{ sub: string; audience: string; clientId: string }[]> {
    const answer = (await this.control('exchanges', undefined, 'GET')) as {
      exchanges: { sub: string; audience: string; clientId: string }[];
    };
    return answer.exchanges;
  }

  /** Requests served so far per endpoint, and the published key ids (newest first). */
  async counters(): Promise<{
    jwks: number;
    introspection: number;
    token: number;
    /** RFC 8693 exchanges issued (token-exchange-grant.mjs). */
    exchange: number;
    kids: string[];
  }> {
    return (await this.control('counters', undefined, 'GET')) as {
      jwks: number;
      introspection: number;
      token: number;
      exchange: number;
      kids: string[];
    };
  }

  /** The client-credentials grant at the token endpoint (RFC 6749 §4.4, `resource` RFC 8707). */
  async clientCredentials(
    client: TestClient = DEFAULT_TEST_CLIENT,
    params: { resource?: string; scope?: string } = {},
  ): Promise<{ access_token: string; expires_in: number; scope?: string; token_type: string }> {
    const body = new URLSearchParams({ grant_type: 'client_credentials' });
    if (params.resource !== undefined) body.set('resource', params.resource);
    if (params.scope !== undefined) body.set('scope', params.scope);
    const res = await fetch(this.tokenUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`,
      },
      body,
    });
    const json = (await res.json()) as Record<string, unknown>;
    if (res.status !== 200)
      throw new Error(`token endpoint ${res.status}: ${JSON.stringify(json)}`);
    return json as { access_token: string; expires_in: number; scope?: string; token_type: string };
  }

  async stop(): Promise<void> {
    if (this.exitCode !== null) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await this.exited;
    clearTimeout(timer);
  }

  private async control(name: string, body: unknown, method = 'POST'): Promise<unknown> {
    const res = await fetch(`${this.issuer}/__test/${name}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: method === 'POST' ? JSON.stringify(body ?? {}) : undefined,
    });
    const json: unknown = await res.json();
    if (res.status !== 200)
      throw new Error(`oidc control ${name} ${res.status}: ${JSON.stringify(json)}`);
    return json;
  }
}

/** `mcp.auth` for a gateway that takes this server's ES256 JWTs for `audience`. */
export function jwtAuthConfig(
  as: TestAuthorizationServer,
  audience: string,
): Record<string, unknown> {
  return { mode: 'jwt', issuer: as.issuer, audience, jwksUrl: as.jwksUrl, algorithms: ['ES256'] };
}
