import { createHash, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { GATEWAY_CONFIG, type AuthConfig, type GatewayConfig } from '@app/config';
import { AccessPolicy } from './access-policy';
import { AUTH_RETRY_AFTER_SECONDS, type AuthOutcome } from './auth-outcome';
import { bearerToken, looksLikeJwt, scopesOf } from './bearer-token';
import { credentialViews, holdsToken, jwtsIn } from './credential-views';
import { ExpiringMap } from './expiring-map';
import { UNFORWARDABLE_HEADERS } from '@app/wire';
import { callerName, type CallerIdentity } from './caller-identity';
import { IntrospectionClient, type IntrospectionFailure } from './introspection-client';
import { IntrospectionGate } from './introspection-gate';
import { JwtVerifier, normalTokenType } from './jwt-verifier';
import {
  protectedResourceMetadata,
  resourceMetadataPaths,
  resourceMetadataUrl,
} from './protected-resource-metadata';

/** Most verified tokens remembered at once (expired ones dropped first, then the oldest). */
const VERIFIED_CACHE_ENTRIES = 10_000;
/** Longest a verified JWT is remembered, in ms, even when it lives longer. */
const VERIFIED_CACHE_MAX_MS = 60_000;
/** Least time between two warn lines about a failing authorization server, ms. */
const FAILURE_LOG_EVERY_MS = 30_000;

const MISSING: AuthOutcome = {
  kind: 'refused',
  status: 401,
  description: 'An access token is required (Authorization: Bearer)',
};
const ANONYMOUS: AuthOutcome = { kind: 'anonymous' };
/**
 * The admin credential on /mcp: it authorizes the management port's /admin only, and on /mcp
 * it would travel on to every `passthrough` source, which could replay it against /admin
 * (docs/security.md, "The admin credential").
 */
const ADMIN_CREDENTIAL: AuthOutcome = {
  kind: 'refused',
  status: 401,
  error: 'invalid_token',
  description:
    'This is the admin credential: it authorizes /admin on the management port only, never /mcp',
};

/** A request's headers as node:http gives them. */
type RequestHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** A compact JWS's payload claims, decoded without a signature check; undefined when unreadable. */
function unverifiedClaims(jwt: string): Readonly<Record<string, unknown>> | undefined {
  try {
    const claims: unknown = JSON.parse(
      Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString(),
    );
    return typeof claims === 'object' && claims !== null && !Array.isArray(claims)
      ? (claims as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

function refused(description: string): AuthOutcome {
  return { kind: 'refused', status: 401, error: 'invalid_token', description };
}

/** The token could not be checked: 503, so the client keeps it and retries (RFC 9110 §15.6.4). */
function unavailable(description: string): AuthOutcome {
  return {
    kind: 'refused',
    status: 503,
    error: 'temporarily_unavailable',
    description,
    retryAfterSeconds: AUTH_RETRY_AFTER_SECONDS,
  };
}

/**
 * The gateway as an OAuth 2.1 resource server for /mcp (docs/operations.md §13): every request's
 * Bearer token is verified (JWTs with jose, opaque tokens by RFC 7662 introspection), every
 * time, whatever its session; the caller's identity never outlives the token. A verified JWT
 * is remembered by the exact Authorization header value that carried it until it expires (at
 * most VERIFIED_CACHE_MAX_MS), which spares the parsing and the signature check on the hot
 * path; an introspection answer is not remembered unless `introspectionCacheSeconds` allows
 * it, and never past the token's `exp`. Introspection goes through an IntrospectionGate
 * (identical tokens coalesced, refused answers reused briefly, concurrency bounded). When the
 * authorization server fails (JWKS or introspection unreachable, slow or 5xx) the outcome is
 * a 503 refusal, never invalid_token, and is not remembered.
 */
@Injectable()
export class ResourceServer implements OnModuleDestroy {
  private readonly logger = new Logger('Auth');
  readonly enabled: boolean;
  readonly policy: AccessPolicy;
  private readonly auth: AuthConfig;
  private readonly jwt?: JwtVerifier;
  private readonly introspection?: IntrospectionGate;
  private lastFailureLogMs = 0;
  private readonly requiredScopes: readonly string[];
  /** mcp.admin.scope: a token carrying it is an admin credential, never passed on to a source. */
  private readonly adminScope: string;
  /** MCP_ADMIN_TOKEN (and its sha256), refused on /mcp in every auth mode; undefined when unset. */
  private readonly adminToken?: string;
  private readonly adminTokenDigest?: Buffer;
  /**
   * Whether /mcp requests need a look at their Authorization header at all: with mcp.auth, or
   * without it when a static admin token exists (which /mcp refuses).
   */
  readonly checksRequests: boolean;
  /** Authorization header value → the verified caller, until when, and its outcome (scopes checked once). */
  private readonly verified = new ExpiringMap<{
    readonly caller: CallerIdentity;
    readonly outcome: AuthOutcome;
  }>(VERIFIED_CACHE_ENTRIES, () => Date.now());
  /** The metadata document's URL (mode jwt only). */
  readonly metadataUrl?: string;
  /** The audiences a token may name: the gateway's and each virtual server's path URL. */
  private readonly audiences: string[] = [];
  /** A registered server's resource was removed (servesOn then checks every token's audience). */
  private resourceRemoved = false;
  private readonly metadataJson?: string;
  /** The gateway's audience (its /mcp URL). */
  private readonly audience?: string;
  /**
   * Per virtual server (docs/operations.md §16): its path's URL, the resource a token for it
   * names, and that resource's metadata URL and document.
   */
  private readonly serverResources = new Map<
    string,
    { readonly resource: string; readonly metadataUrl: string; readonly metadataJson: string }
  >();
  /** Metadata documents by well-known path (the gateway's and each virtual server's). */
  private readonly metadataByPath = new Map<string, string>();

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    this.auth = config.mcp.auth;
    this.enabled = this.auth.mode === 'jwt';
    this.policy = new AccessPolicy(this.enabled ? config.mcp.access : undefined);
    this.requiredScopes = this.auth.requiredScopes;
    this.adminScope = config.admin?.scope ?? 'mcp:admin';
    this.adminToken = config.admin?.token;
    this.adminTokenDigest = this.adminToken === undefined ? undefined : digest(this.adminToken);
    this.checksRequests = this.enabled || this.adminTokenDigest !== undefined;
    if (!this.enabled) {
      if (config.profile !== 'local')
        this.logger.warn(
          `mcp.auth.mode is none under profile "${config.profile}": /mcp accepts every caller without a token (docs/security.md)`,
        );
      return;
    }
    // validated at boot (libs/config auth-rules): issuer, audience and a way to check tokens are set
    const audience = this.auth.audience ?? '';
    this.audience = audience;
    // each virtual server's path is a resource of its own: clients ask a token for the URL they
    // connect to (RFC 8707); such a token serves that path only (servesOn)
    for (const server of config.mcp.virtualServers) this.addServerResource(server.id);
    // read on every check: a server registered at runtime adds its resource here
    const audiences = this.audiences;
    audiences.push(audience, ...[...this.serverResources.values()].map((s) => s.resource));
    if (this.auth.jwksUrl !== undefined)
      this.jwt = new JwtVerifier(
        {
          jwksUrl: this.auth.jwksUrl,
          issuer: this.auth.issuer ?? '',
          audience: audiences,
          algorithms: this.auth.algorithms,
          clockSkewSeconds: this.auth.clockSkewSeconds,
          tokenTypes: this.auth.tokenTypes.map(normalTokenType),
          timeoutMs: this.auth.authorizationServerTimeoutMillis,
        },
        // a key gone from the set: every remembered token is verified again at its next use
        // (those of the removed key are refused then; open streams at their next recheck)
        () => this.verified.deleteWhere(() => true),
      );
    if (this.auth.introspectionUrl !== undefined)
      this.introspection = new IntrospectionGate(
        new IntrospectionClient(
          {
            url: this.auth.introspectionUrl,
            clientId: this.auth.introspectionClientId ?? '',
            clientSecret: config.authSecrets?.introspectionClientSecret ?? '',
            issuer: this.auth.issuer,
            audience: audiences,
            clockSkewSeconds: this.auth.clockSkewSeconds,
            timeoutMs: this.auth.authorizationServerTimeoutMillis,
          },
          (failure) => this.failed('introspection', failure),
        ),
        {
          maxConcurrent: this.auth.introspectionMaxConcurrent,
          inactiveCacheMs: this.auth.introspectionInactiveCacheSeconds * 1000,
          slotWaitMs: this.auth.authorizationServerTimeoutMillis,
        },
      );
    this.metadataUrl = resourceMetadataUrl(audience);
    this.metadataJson = JSON.stringify(protectedResourceMetadata(this.auth));
    for (const path of resourceMetadataPaths(audience))
      this.metadataByPath.set(path, this.metadataJson);
    this.logger.log(
      `mcp.auth: jwt (issuer ${this.auth.issuer ?? ''}, audience ${audience}, ${this.jwt === undefined ? '' : 'JWKS'}${this.jwt !== undefined && this.introspection !== undefined ? ' + ' : ''}${this.introspection === undefined ? '' : 'introspection'}; access rules: ${config.mcp.access?.rules.length ?? 'none'})`,
    );
  }

  /**
   * A virtual server's path as a resource of its own (docs/operations.md §16 "Tokens per
   * path"): its protected-resource metadata, and tokens issued for its URL. For a server
   * registered at runtime too; nothing when auth is off.
   */
  addServerResource(id: string): void {
    if (!this.enabled || this.serverResources.has(id)) return;
    const resource = `${(this.audience ?? '').replace(/\/+$/, '')}/servers/${id}`;
    const metadataJson = JSON.stringify({ ...protectedResourceMetadata(this.auth), resource });
    this.serverResources.set(id, {
      resource,
      metadataUrl: resourceMetadataUrl(resource),
      metadataJson,
    });
    for (const path of resourceMetadataPaths(resource).slice(1)) {
      this.metadataByPath.set(path, metadataJson);
    }
    if (this.audiences.length > 0) this.audiences.push(resource);
  }

  /** A registered server was removed: its path's metadata and its tokens go with it. */
  removeServerResource(id: string): void {
    const known = this.serverResources.get(id);
    if (known === undefined) return;
    this.serverResources.delete(id);
    this.resourceRemoved = true;
    // tokens remembered for that resource are verified again (and refused) on their next use
    this.verified.deleteWhere((entry) => !hasAudience(entry.caller, this.audience));
    for (const path of resourceMetadataPaths(known.resource).slice(1)) {
      this.metadataByPath.delete(path);
    }
    const at = this.audiences.indexOf(known.resource);
    if (at >= 0) this.audiences.splice(at, 1);
  }

  /**
   * The protected-resource metadata (RFC 9728) as JSON text: the gateway's, or for a virtual
   * server's well-known path that server's (its path URL as `resource`); undefined when auth is
   * off or the path is none of them.
   */
  metadataDocument(path?: string): string | undefined {
    return path === undefined ? this.metadataJson : this.metadataByPath.get(path);
  }

  /** The metadata URL a refusal points at: the virtual server's on its path, else the gateway's. */
  metadataUrlFor(server: string | undefined): string {
    return (
      (server === undefined ? undefined : this.serverResources.get(server)?.metadataUrl) ??
      this.metadataUrl ??
      ''
    );
  }

  /**
   * Whether a verified token serves this path (RFC 8707, docs/operations.md §16): one for the
   * gateway's audience serves every path; one for a virtual server's path URL only that path.
   */
  servesOn(caller: CallerIdentity, server: string | undefined): boolean {
    // no resource but the gateway's was ever accepted: every verified token names it. Once a
    // registered server's resource was removed, a token remembered for it must not pass here.
    if (this.serverResources.size === 0 && !this.resourceRemoved) return true;
    if (hasAudience(caller, this.audience)) return true;
    return server !== undefined && hasAudience(caller, this.serverResources.get(server)?.resource);
  }

  /**
   * The /mcp decision for an Authorization header value verified before and still
   * remembered: no parsing, no I/O, no await (the hot path of an agent that sends the same
   * token on every call). undefined when authenticate() must decide. Same answers as
   * authenticate().
   */
  authenticateRemembered(authorization: string | string[] | undefined): AuthOutcome | undefined {
    if (!this.enabled) return this.anonymousOrAdmin(authorization);
    if (typeof authorization !== 'string') return undefined;
    // the static admin token is never a verified JWT, so it is never remembered: authenticate() refuses it
    return this.verified.get(authorization)?.outcome;
  }

  /**
   * Decides one /mcp request by its Authorization header: anonymous (mode none), the caller,
   * or a refusal (401 no/bad token or the static admin token, 403 a required scope missing, 503
   * the authorization server could not check the token: JWKS or introspection failed). Never
   * throws.
   */
  async authenticate(authorization: string | string[] | undefined): Promise<AuthOutcome> {
    const admin = this.anonymousOrAdmin(authorization);
    if (!this.enabled || admin.kind === 'refused') return admin;
    return this.verifyBearer(authorization);
  }

  /**
   * The bearer check alone, for the admin role (apps/gateway admin): as authenticate(),
   * without the refusal of the static admin token (which the admin check decides itself).
   */
  async verifyBearer(authorization: string | string[] | undefined): Promise<AuthOutcome> {
    if (!this.enabled) return ANONYMOUS;
    // remembered by the header's exact value (its first line when repeated)
    const value = Array.isArray(authorization) ? authorization[0] : authorization;
    if (value === undefined) return MISSING;
    const token = bearerToken(value);
    if (token === undefined)
      return refused('The Authorization header must be "Bearer <access token>"');
    const now = Date.now();
    const known = this.verified.get(value, now);
    if (known !== undefined) return known.outcome;
    const checked = await this.check(token, value, now);
    if (checked.kind !== 'authenticated') return checked;
    return this.withScopes(checked.caller);
  }

  /**
   * Mode none: anonymous, unless the request carries the static admin token: as its bearer
   * (the form /admin takes), or anywhere in any Authorization line (another scheme, a list),
   * since whatever the header holds travels on to `passthrough` sources as it is.
   */
  private anonymousOrAdmin(authorization: string | string[] | undefined): AuthOutcome {
    if (this.adminToken === undefined || authorization === undefined) return ANONYMOUS;
    // the form /admin takes, compared in constant time; then every other form and reading
    const token = bearerToken(authorization);
    if (token !== undefined && this.isAdminToken(token)) return ADMIN_CREDENTIAL;
    return this.holdsAdminToken(authorization) ? ADMIN_CREDENTIAL : ANONYMOUS;
  }

  private isAdminToken(token: string): boolean {
    return (
      this.adminTokenDigest !== undefined && timingSafeEqual(digest(token), this.adminTokenDigest)
    );
  }

  /**
   * Whether a header's value carries the static admin token, in any reading of it
   * (credentialViews: as it came, percent-decoded, base64-decoded): as a token of its own
   * (a bearer, a doubled scheme, another scheme, an item of a list, a `name=value` pair, in
   * brackets), whatever the token's length, or, for a token of 12 characters or more,
   * anywhere in it (a shorter one would be found inside innocent words).
   */
  private holdsAdminToken(header: string | readonly string[]): boolean {
    const adminToken = this.adminToken;
    if (adminToken === undefined) return false;
    const values = typeof header === 'string' ? [header] : header;
    for (const value of values)
      for (const view of credentialViews(value))
        if (adminToken.length >= 12 ? view.includes(adminToken) : holdsToken(view, adminToken))
          return true;
    return false;
  }

  /**
   * The static admin token in a request header other than Authorization: 401 as in
   * Authorization, since a source's `forwardHeaders` may pass any header on as it came
   * (docs/security.md "The admin credential"); undefined when there is none.
   */
  refusalBeside(headers: RequestHeaders): AuthOutcome | undefined {
    if (this.adminToken === undefined) return undefined;
    for (const name in headers) {
      // Authorization has its own checks; the others listed never travel to a source
      if (name === 'authorization' || UNFORWARDABLE_HEADERS.has(name)) continue;
      const value = headers[name];
      if (value !== undefined && this.holdsAdminToken(value)) return ADMIN_CREDENTIAL;
    }
    return undefined;
  }

  /**
   * The headers a caller's request may carry on to its sources: without Authorization when the
   * caller's token carries the admin scope (mayPassOn), and without any other header holding a
   * JWT that claims the admin scope (read, not verified: such a header is only left out), which
   * a `forwardHeaders` source could replay against /admin (docs/security.md "The admin
   * credential"). The same object when nothing is left out.
   */
  headersToPassOn<H extends RequestHeaders>(headers: H, caller: CallerIdentity): H {
    let out: Record<string, string | string[] | undefined> | undefined;
    if (!this.mayPassOn(caller)) {
      const { authorization: _dropped, ...rest } = headers;
      out = rest;
    }
    for (const name in headers) {
      // Authorization has its own checks; the others listed never travel to a source
      if (name === 'authorization' || UNFORWARDABLE_HEADERS.has(name)) continue;
      const value = headers[name];
      if (value !== undefined && this.claimsAdminScope(value)) {
        out ??= { ...headers };
        delete out[name];
      }
    }
    return (out ?? headers) as H;
  }

  /**
   * Whether a header's value holds a JWT whose payload claims the admin scope (unverified), in
   * any reading of it (credentialViews) and wherever in it (wrapped in a pair, brackets, a path).
   */
  private claimsAdminScope(header: string | readonly string[]): boolean {
    const values = typeof header === 'string' ? [header] : header;
    for (const value of values)
      for (const view of credentialViews(value))
        for (const jwt of jwtsIn(view)) {
          const claims = unverifiedClaims(jwt);
          if (claims !== undefined && scopesOf(claims).includes(this.adminScope)) return true;
        }
    return false;
  }

  /**
   * Whether the caller's own token may travel on to a source (`passthrough`): never when it
   * carries the admin scope, which a source could replay against /admin (docs/security.md,
   * "The admin credential"). The call itself is served; the source gets no Authorization.
   */
  mayPassOn(caller: CallerIdentity): boolean {
    return !caller.scopes.includes(this.adminScope);
  }

  /**
   * The caller, or 403 insufficient_scope when a required scope is missing
   * (docs/operations.md §13 "Refusals").
   */
  private withScopes(caller: CallerIdentity): AuthOutcome {
    for (const scope of this.requiredScopes) {
      if (!caller.scopes.includes(scope))
        return {
          kind: 'refused',
          status: 403,
          error: 'insufficient_scope',
          description: 'The access token lacks a scope this resource requires',
          scope: this.requiredScopes.join(' '),
        };
    }
    return { kind: 'authenticated', caller };
  }

  private async check(token: string, header: string, now: number): Promise<AuthOutcome> {
    if (this.jwt !== undefined && (looksLikeJwt(token) || this.introspection === undefined)) {
      const verdict = await this.jwt.verify(token);
      if (!verdict.ok) {
        if (verdict.unavailable !== true) return refused(verdict.reason);
        // a kid not published yet is no failure of the authorization server's to warn about
        if (verdict.keyNotYetKnown !== true)
          this.failed('JWKS', { cause: 'the key set could not be fetched' });
        return unavailable(verdict.reason);
      }
      const caller = callerOf(verdict.payload, token);
      if (callerName(caller) === undefined) return refused(NAMES_NO_CALLER);
      this.remember(header, caller, now);
      return { kind: 'authenticated', caller };
    }
    if (this.introspection === undefined)
      return refused('The access token is malformed or invalid');
    const result = await this.introspection.introspect(token);
    if (!result.active)
      return result.unavailable === true ? unavailable(result.reason) : refused(result.reason);
    const caller = callerOf(result.claims, token);
    if (callerName(caller) === undefined) return refused(NAMES_NO_CALLER);
    const cacheMs = (this.auth.introspectionCacheSeconds ?? 0) * 1000;
    if (cacheMs > 0) this.remember(header, caller, now, cacheMs);
    return { kind: 'authenticated', caller };
  }

  /** Remembers a verified token by its Authorization header value until its exp (at most maxMs). */
  private remember(
    header: string,
    caller: CallerIdentity,
    now: number,
    maxMs = VERIFIED_CACHE_MAX_MS,
  ): void {
    const expMs = caller.expiresAt === undefined ? now + maxMs : caller.expiresAt * 1000;
    const untilMs = Math.min(expMs, now + maxMs);
    this.verified.set(header, { caller, outcome: this.withScopes(caller) }, untilMs, now);
  }

  /** One warn line per FAILURE_LOG_EVERY_MS about a failing authorization server (no token in it). */
  private failed(what: 'JWKS' | 'introspection', failure: IntrospectionFailure): void {
    const now = Date.now();
    if (now - this.lastFailureLogMs < FAILURE_LOG_EVERY_MS) return;
    this.lastFailureLogMs = now;
    this.logger.warn(
      `mcp.auth: the authorization server's ${what} failed (${failure.cause}): requests whose token needs it are answered 503 (docs/security.md)`,
    );
  }

  onModuleDestroy(): void {
    this.jwt?.close();
  }
}

/**
 * A token that names neither a subject nor a client cannot be told from another such token:
 * sessions, cancellations, rate limits and relayed requests are bound to the caller it names
 * (docs/security.md, "Who is a caller"), so it is refused (RFC 9068 §2.2 requires both).
 */
const NAMES_NO_CALLER =
  'The access token names no caller: it has neither a "sub" nor a "client_id" (or "azp") claim';

/** A claim that names someone: a non-empty string. */
function nameClaim(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The CallerIdentity of verified claims (a JWT payload or an introspection answer). */
export function callerOf(claims: Readonly<Record<string, unknown>>, token: string): CallerIdentity {
  const clientId = nameClaim(claims.client_id) ?? nameClaim(claims.azp);
  return {
    subject: nameClaim(claims.sub),
    clientId,
    scopes: scopesOf(claims),
    claims,
    expiresAt: typeof claims.exp === 'number' ? claims.exp : undefined,
    token,
  };
}

/** Whether a verified token names this audience (`aud` a string or a list). */
function hasAudience(caller: CallerIdentity, value: string | undefined): boolean {
  const aud = caller.claims.aud;
  return value !== undefined && (aud === value || (Array.isArray(aud) && aud.includes(value)));
}
