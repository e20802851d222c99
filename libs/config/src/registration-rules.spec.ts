import 'reflect-metadata';
import type { GatewayConfig } from './gateway-config';
import { McpConfig } from './mcp-config.model';
import { checkRegistration, type RegisteredUpstreamConfig } from './registration-rules';
import { secretEnvAllowed } from './load-config';
import { plainToInstance } from 'class-transformer';
import { CREDENTIAL_HEADERS, PERSONAL_CALLER_HEADERS } from '@app/wire';
import { upstreamProblems } from './upstream-rules';

/** A validated-looking config: one bundle `orders` (prefix "orders.") and one upstream `calc`. */
function config(
  env: Record<string, string> = {},
  extra: Record<string, unknown> = {},
): Pick<GatewayConfig, 'mcp' | 'admin'> {
  const mcp = plainToInstance(
    McpConfig,
    {
      identity: 'gw',
      // the issuer whose origin a registered token endpoint may share
      auth: { issuer: 'https://idp.example/realms/gw' },
      bundles: [
        {
          id: 'orders',
          manifestUrl: 'http://10.0.0.1/m',
          baseEndpoint: 'http://10.0.0.1',
          namePrefix: 'orders.',
          enabled: true,
        },
      ],
      upstreams: [{ id: 'calc', url: 'http://10.0.0.2/mcp' }],
      ...extra,
    },
    { exposeDefaultValues: true },
  );
  return {
    mcp,
    admin: {
      allowLoopback: false,
      urlPatterns: [],
      allowedRanges: [],
      scope: 'mcp:admin',
      secretEnv: (name) => env[name],
      secretEnvAllowed: (name) => secretEnvAllowed(name, ['MCP_UPSTREAM_SECRET_*', 'SECRET_A']),
    },
  };
}

const registered = (id: string, namePrefix?: string): RegisteredUpstreamConfig =>
  ({ id, url: 'http://10.0.0.9/mcp', namePrefix, enabled: true }) as RegisteredUpstreamConfig;

describe('checkRegistration: a runtime registration passes the boot rules (docs/operations.md §15 "Routes")', () => {
  it('a valid upstream gets the definition the boot would build: default prefix, defaults, resolved secret', () => {
    const check = checkRegistration(
      {
        id: 'tickets.v2',
        url: 'https://10.0.0.3/mcp',
        authorization: { mode: 'static', valueEnv: 'MCP_UPSTREAM_SECRET_TICKETS' },
      },
      config({ MCP_UPSTREAM_SECRET_TICKETS: 'Bearer t' }),
      [],
    );
    expect(check).toMatchObject({
      ok: true,
      definition: {
        id: 'tickets.v2',
        namePrefix: 'tickets_v2__',
        enabled: true,
        protocol: 'auto',
        connectMillis: 1000,
        listMillis: 5000,
        authorization: { mode: 'static', value: 'Bearer t' },
      },
    });
  });

  it('field problems name the body field, every one of them', () => {
    const check = checkRegistration(
      {
        id: '',
        url: 'http://10.0.0.3/mcp',
        protocol: 'x',
        enabled: 'yes',
        timeouts: { listMillis: 0 },
      },
      config(),
      [],
    );
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.conflict).toBe(false);
    expect(check.problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^id: /),
        expect.stringMatching(/^protocol: /),
        expect.stringMatching(/^enabled: /),
        expect.stringMatching(/^timeouts\.listMillis: /),
      ]),
    );
  });

  it('every rule runs on one body: field, URL, credential, header and prefix problems come back together', () => {
    const check = checkRegistration(
      {
        id: 'calc',
        url: 'ftp://10.0.0.3/mcp',
        namePrefix: 'orders.x',
        timeouts: { callMillis: -1 },
        forwardHeaders: ['X-Api-Key'],
        authorization: { mode: 'passthrough' },
      },
      config(),
      [],
    );
    expect(check.ok).toBe(false);
    if (check.ok) return;
    // the clashes (id, prefix) are there too, but the body is invalid: a 400, not a 409
    expect(check.conflict).toBe(false);
    expect(check.problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^timeouts\.callMillis: /),
        expect.stringMatching(/^url: .*ftp/),
        expect.stringMatching(/^authorization\.mode: passthrough/),
        expect.stringMatching(/^forwardHeaders: "X-Api-Key"/),
        expect.stringMatching(/^id: .*calc/),
        expect.stringMatching(/^namePrefix: .*orders/),
      ]),
    );
  });

  it('unknown fields are refused, and a secret value is refused with the way to reference one', () => {
    const unknown = checkRegistration(
      { id: 'a', url: 'http://10.0.0.3/', headers: {} },
      config(),
      [],
    );
    expect(unknown).toMatchObject({
      ok: false,
      problems: [expect.stringMatching(/^headers: unknown key/)],
    });
    for (const key of ['value', 'token', 'header'])
      expect(
        checkRegistration(
          {
            id: 'a',
            url: 'http://10.0.0.3/',
            authorization: { mode: 'static', [key]: 'Bearer x' },
          },
          config(),
          [],
        ),
      ).toMatchObject({
        ok: false,
        conflict: false,
        problems: [
          expect.stringMatching(
            new RegExp(`^authorization\\.${key}: secret values are never accepted`),
          ),
        ],
      });
  });

  it('tokenExchange references are accepted, a live upstream is refused with the way out', () => {
    const exchange = checkRegistration(
      {
        id: 'a',
        url: 'http://10.0.0.3/',
        authorization: {
          mode: 'tokenExchange',
          tokenEndpoint: 'https://idp.example/realms/gw/protocol/openid-connect/token',
          clientId: 'gateway',
          clientSecretEnv: 'MCP_UPSTREAM_SECRET_EXCHANGE',
          audience: 'https://a.example/mcp',
        },
      },
      config({ MCP_UPSTREAM_SECRET_EXCHANGE: 's3cret' }),
      [],
    );
    expect(JSON.stringify(exchange)).not.toContain('secret values are never accepted');
    // the client secret is read from the variable clientSecretEnv names
    expect(exchange).toMatchObject({ ok: true });
    expect(JSON.stringify(exchange.ok ? exchange.definition : {})).toContain('s3cret');
    expect(
      checkRegistration({ id: 'b', url: 'http://10.0.0.4/', lists: 'live' }, config(), []),
    ).toMatchObject({
      ok: false,
      conflict: false,
      problems: [
        expect.stringMatching(/^lists: "live" is available for upstreams in mcp\.upstreams/),
      ],
    });
  });

  it("names only variables of mcp.admin.allowedSecretEnv, never the gateway's own secrets", () => {
    for (const name of ['MCP_ADMIN_TOKEN', 'MCP_SESSION_KEYS', 'REDIS_URL', 'PATH', 'HOME'])
      expect(
        checkRegistration(
          { id: 'a', url: 'http://10.0.0.3/', authorization: { mode: 'static', valueEnv: name } },
          config({ [name]: 'x' }),
          [],
        ),
      ).toMatchObject({
        ok: false,
        conflict: false,
        problems: expect.arrayContaining([
          `authorization.valueEnv: ${name} is not a variable registrations may name (mcp.admin.allowedSecretEnv; the gateway's own secrets never)`,
        ]),
      });
    expect(secretEnvAllowed('MCP_ADMIN_TOKEN', ['*'])).toBe(false);
    expect(secretEnvAllowed('ANY', ['*'])).toBe(true);
    expect(secretEnvAllowed('SECRET_AB', ['SECRET_A'])).toBe(false);
  });

  it('never echoes what was sent in authorization (a secret in the wrong place)', () => {
    for (const authorization of [
      'Bearer topsecret',
      { mode: 'Bearer topsecret' },
      { mode: 'static', valueEnv: 'Bearer topsecret' },
    ]) {
      const check = checkRegistration(
        { id: 'a', url: 'http://10.0.0.3/', authorization },
        config(),
        [],
      );
      expect(check.ok).toBe(false);
      expect(JSON.stringify(check)).not.toContain('topsecret');
    }
  });

  it('an unparsable URL is quoted without what could be credentials', () => {
    const check = checkRegistration(
      { id: 'a', url: 'http://user:PwLeak444@10.0.0.1:99999/' },
      config(),
      [],
    );
    expect(check).toMatchObject({ ok: false, problems: [expect.stringMatching(/^url: /)] });
    expect(JSON.stringify(check)).not.toContain('PwLeak444');
    expect(JSON.stringify(check)).not.toContain('user');
  });

  it('a URL with credentials or another scheme is refused', () => {
    for (const url of ['ftp://10.0.0.3/', 'http://u:p@10.0.0.3/', 'not a url'])
      expect(checkRegistration({ id: 'a', url }, config(), [])).toMatchObject({
        ok: false,
        conflict: false,
        problems: [expect.stringMatching(/^url: /)],
      });
  });

  it('an id taken by a bundle, a configured or a registered upstream is a conflict naming it', () => {
    expect(
      checkRegistration({ id: 'orders', url: 'http://10.0.0.3/', namePrefix: 'o_' }, config(), []),
    ).toMatchObject({
      ok: false,
      conflict: true,
      problems: [expect.stringContaining('bundle "orders"')],
    });
    expect(
      checkRegistration({ id: 'calc', url: 'http://10.0.0.3/', namePrefix: 'c_' }, config(), []),
    ).toMatchObject({
      ok: false,
      conflict: true,
      problems: [expect.stringContaining('configured upstream "calc"')],
    });
    expect(
      checkRegistration({ id: 'mine', url: 'http://10.0.0.3/', namePrefix: 'm_' }, config(), [
        registered('mine', 'n_'),
      ]),
    ).toMatchObject({
      ok: false,
      conflict: true,
      problems: [expect.stringContaining('registered upstream "mine"')],
    });
  });

  it('a prefix equal to, starting with or started by another source is a conflict naming it', () => {
    const cases: [string, string][] = [
      ['calc__', 'configured upstream "calc"'],
      ['calc__x', 'configured upstream "calc"'],
      ['ca', 'configured upstream "calc"'],
      ['reg_', 'registered upstream "r"'],
      ['re', 'registered upstream "r"'],
    ];
    for (const [namePrefix, other] of cases) {
      const check = checkRegistration(
        { id: 'new', url: 'http://10.0.0.3/', namePrefix },
        config(),
        [registered('r', 'reg_')],
      );
      expect(check).toMatchObject({
        ok: false,
        conflict: true,
        problems: [expect.stringContaining(other)],
      });
      if (!check.ok) expect(check.problems[0]).toMatch(/^namePrefix: /);
    }
  });

  it('"" as prefix is refused while other sources are enabled (a 400, not a conflict)', () => {
    expect(
      checkRegistration({ id: 'new', url: 'http://10.0.0.3/', namePrefix: '' }, config(), []),
    ).toMatchObject({
      ok: false,
      conflict: false,
      problems: [expect.stringMatching(/^namePrefix: "" is allowed only/)],
    });
  });

  it('beside a source whose prefix is "" an enabled registration is refused, naming that source (400)', () => {
    const sole = config(
      {},
      { bundles: [], upstreams: [{ id: 'solo', url: 'http://10.0.0.2/mcp', namePrefix: '' }] },
    );
    const body = { id: 'new', url: 'http://10.0.0.3/' };
    expect(checkRegistration(body, sole, [])).toMatchObject({
      ok: false,
      conflict: false,
      problems: [
        expect.stringMatching(
          /^enabled: configured upstream "solo" publishes its names without a prefix/,
        ),
      ],
    });
    // one registered before it with "" (the sole source then) is named alike
    const none = config({}, { bundles: [], upstreams: [] });
    const first = registered('first', '');
    expect(checkRegistration(body, none, [first])).toMatchObject({
      ok: false,
      conflict: false,
      problems: [expect.stringMatching(/^enabled: registered upstream "first" publishes/)],
    });
    // a disabled one leaves the "" source the only enabled one
    expect(checkRegistration({ ...body, enabled: false }, sole, [])).toMatchObject({ ok: true });
  });

  it('a static authorization whose variable is unset is refused naming the variable', () => {
    expect(
      checkRegistration(
        {
          id: 'a',
          url: 'http://10.0.0.3/',
          authorization: { mode: 'static', valueEnv: 'MCP_UPSTREAM_SECRET_NOPE' },
        },
        config(),
        [],
      ),
    ).toMatchObject({
      ok: false,
      problems: [
        'authorization.valueEnv: environment variable MCP_UPSTREAM_SECRET_NOPE is not set or empty',
      ],
    });
  });

  it("forwardHeaders that carry a caller's credentials (auth proxies' token headers, cookies, keys) are refused naming each", () => {
    const names = [
      'X-Forwarded-Authorization',
      'X-Amzn-Oidc-Accesstoken',
      'x-amzn-oidc-data',
      'X-Forwarded-Access-Token',
      'X-Auth-Request-Access-Token',
      'X-Ms-Token-Aad-Id-Token',
      'X-Goog-Iap-Jwt-Assertion',
      'X-Mcp-Token',
      'X-Client-Secret',
      'X-Session',
      'X-Api-Key',
      'X-ApiKey',
      'Set-Cookie2',
      // keys by other names, and the other credential words
      'Ocp-Apim-Subscription-Key',
      'X-Functions-Key',
      'X-Master-Key',
      'DPoP',
      'X-Bearer',
      'X-Pwd',
      'X-Passphrase',
      'X-Hub-Signature-256',
      'X-Client-Assertion',
      'X-Private-Data',
      'X-CSRF-Header',
      'X-XSRF-Header',
    ];
    const check = checkRegistration(
      { id: 'x', url: 'http://10.0.0.3/mcp', forwardHeaders: names },
      config(),
      [],
    );
    expect(check).toMatchObject({ ok: false, conflict: false });
    expect(check.ok ? [] : check.problems).toEqual(
      names.map((name) =>
        expect.stringMatching(
          new RegExp(`^forwardHeaders: "${name}" may carry a caller's credentials`),
        ),
      ),
    );
    // Authorization and Cookie keep the rule every upstream has (one problem each)
    const base = checkRegistration(
      { id: 'x', url: 'http://10.0.0.3/mcp', forwardHeaders: ['Authorization', 'Cookie'] },
      config(),
      [],
    );
    expect(base.ok ? [] : base.problems).toEqual([
      expect.stringMatching(/^forwardHeaders: "Authorization" may not be forwarded/),
      expect.stringMatching(/^forwardHeaders: "Cookie" may not be forwarded/),
    ]);
    expect(
      checkRegistration(
        { id: 'x', url: 'http://10.0.0.3/mcp', forwardHeaders: ['X-Tenant', 'X-Request-Id'] },
        config(),
        [],
      ),
    ).toMatchObject({ ok: true });
  });

  it('forwardHeaders naming a personal caller header (employee-no, in any case) are refused naming each', () => {
    const names = ['employee-no', 'Virtual-Employee-No', 'EMPLOYEE-NO'];
    const check = checkRegistration(
      { id: 'x', url: 'http://10.0.0.3/mcp', forwardHeaders: names },
      config(),
      [],
    );
    expect(check).toMatchObject({ ok: false, conflict: false });
    expect(check.ok ? [] : check.problems).toEqual(
      names.map((name) =>
        expect.stringMatching(new RegExp(`^forwardHeaders: "${name}" identifies the caller`)),
      ),
    );
  });

  it('every header the logs redact (credentials and personal headers) is refused in a registration', () => {
    for (const name of [...CREDENTIAL_HEADERS, ...PERSONAL_CALLER_HEADERS]) {
      const check = checkRegistration(
        { id: 'x', url: 'http://10.0.0.3/mcp', forwardHeaders: [name.toUpperCase()] },
        config(),
        [],
      );
      expect(check.ok ? [] : check.problems).toEqual([
        expect.stringMatching(new RegExp(`^forwardHeaders: "${name.toUpperCase()}"`)),
      ]);
    }
  });

  it('a configured upstream may forward the personal caller headers: the operator chose its URL', () => {
    const mcp = {
      discovery: { enabled: false },
      bundles: [],
      upstreams: [
        {
          id: 'u',
          url: 'http://10.0.0.3/mcp',
          forwardHeaders: ['employee-no', 'Virtual-Employee-No'],
        },
      ],
    } as unknown as McpConfig;
    expect(upstreamProblems(mcp)).toEqual([]);
  });

  it('a body that is not an object is refused', () => {
    for (const body of [null, [], 'x', 3])
      expect(checkRegistration(body, config(), [])).toMatchObject({ ok: false, conflict: false });
  });

  describe('where a registration may send a caller credential (docs/security.md)', () => {
    const exchange = (tokenEndpoint: string) => ({
      id: 'x',
      url: 'http://10.0.0.3/mcp',
      authorization: {
        mode: 'tokenExchange',
        tokenEndpoint,
        clientId: 'gateway',
        clientSecretEnv: 'MCP_UPSTREAM_SECRET_EXCHANGE',
        audience: 'https://x.example/mcp',
      },
    });
    const env = { MCP_UPSTREAM_SECRET_EXCHANGE: 's3cret' };

    it('passthrough is refused with a 400 naming authorization.mode', () => {
      expect(
        checkRegistration(
          { id: 'x', url: 'http://10.0.0.3/mcp', authorization: { mode: 'passthrough' } },
          config(),
          [],
        ),
      ).toMatchObject({
        ok: false,
        conflict: false,
        problems: [
          expect.stringMatching(
            /^authorization\.mode: passthrough is not accepted for a registered/,
          ),
        ],
      });
    });

    it('a stored passthrough record is refused as well (the check replicas apply on every read)', () => {
      const stored = plainToInstance(
        McpConfig,
        {
          upstreams: [
            { id: 'x', url: 'http://10.0.0.3/mcp', authorization: { mode: 'passthrough' } },
          ],
        },
        { exposeDefaultValues: true },
      ).upstreams[0];
      expect(checkRegistration(stored, config(), [])).toMatchObject({ ok: false });
    });

    it("a token endpoint of the registrant's choosing is refused naming authorization.tokenEndpoint", () => {
      for (const endpoint of [
        'https://attacker.example/token',
        // same host as the issuer, another origin (scheme, port)
        'http://idp.example/realms/gw/protocol/openid-connect/token',
        'https://idp.example:8443/token',
      ])
        expect(checkRegistration(exchange(endpoint), config(env), [])).toMatchObject({
          ok: false,
          conflict: false,
          problems: [
            expect.stringMatching(
              /^authorization\.tokenEndpoint: is not a token endpoint the configuration trusts/,
            ),
          ],
        });
    });

    it('a token endpoint at the origin of mcp.auth.issuer or an authorization server is accepted', () => {
      expect(
        checkRegistration(exchange('https://IDP.example:443/other/token'), config(env), []),
      ).toMatchObject({ ok: true });
      expect(
        checkRegistration(
          exchange('https://as2.example/oauth2/token'),
          config(env, {
            auth: { issuer: 'https://idp.example', authorizationServers: ['https://as2.example/'] },
          }),
          [],
        ),
      ).toMatchObject({ ok: true });
    });

    it('the exact token endpoint of a configured source (even a disabled one) is accepted, no other path there', () => {
      const extra = {
        upstreams: [
          {
            id: 'calc',
            url: 'http://10.0.0.2/mcp',
            enabled: false,
            authorization: {
              mode: 'tokenExchange',
              tokenEndpoint: 'http://10.0.0.7/token',
              clientId: 'gateway',
              clientSecretEnv: 'MCP_UPSTREAM_SECRET_EXCHANGE',
              audience: 'https://calc.example/mcp',
            },
          },
        ],
      };
      expect(
        checkRegistration(exchange('HTTP://10.0.0.7:80/token'), config(env, extra), []),
      ).toMatchObject({
        ok: true,
      });
      expect(
        checkRegistration(exchange('http://10.0.0.7/elsewhere'), config(env, extra), []),
      ).toMatchObject({ ok: false });
    });

    const withAudience = (audience: string, scope?: string) => {
      const body = exchange('https://idp.example/realms/gw/protocol/openid-connect/token');
      return { ...body, authorization: { ...body.authorization, audience, scope } };
    };
    const gatewayAuth = {
      auth: {
        issuer: 'https://idp.example/realms/gw',
        audience: 'https://gw.example/mcp',
        authorizationServers: ['https://as2.example/'],
      },
    };

    it("the gateway's own audience (or its authorization server's), in any spelling, is refused naming authorization.audience", () => {
      for (const audience of [
        'https://gw.example/mcp',
        'https://gw.example/mcp/',
        'HTTPS://GW.example:443/mcp//',
        'https://gw.example/mcp?x=1',
        'https://gw.example/',
        'https://idp.example/realms/gw',
        'https://as2.example',
      ])
        expect(
          checkRegistration(withAudience(audience), config(env, gatewayAuth), []),
        ).toMatchObject({
          ok: false,
          conflict: false,
          problems: [expect.stringMatching(/^authorization\.audience: is this gateway's own/)],
        });
      // a gateway audience that is not a URL is compared as written
      expect(
        checkRegistration(
          withAudience('mcp-gateway'),
          config(env, {
            auth: { issuer: 'https://idp.example/realms/gw', audience: 'mcp-gateway' },
          }),
          [],
        ),
      ).toMatchObject({ ok: false, problems: [expect.stringMatching(/^authorization\.audience/)] });
    });

    it('the audience of a configured bundle or upstream (even a disabled one) is refused naming authorization.audience', () => {
      const source = (audience: string) => ({
        mode: 'tokenExchange',
        tokenEndpoint: 'http://10.0.0.7/token',
        clientId: 'gateway',
        clientSecretEnv: 'MCP_UPSTREAM_SECRET_EXCHANGE',
        audience,
      });
      const extra = {
        ...gatewayAuth,
        upstreams: [
          {
            id: 'calc',
            url: 'http://10.0.0.2/mcp',
            enabled: false,
            authorization: source('https://calc.example/mcp'),
          },
        ],
        bundles: [
          {
            id: 'orders',
            manifestUrl: 'http://10.0.0.1/m',
            baseEndpoint: 'http://10.0.0.1',
            namePrefix: 'orders.',
            authorization: source('orders-api'),
          },
        ],
      };
      for (const audience of ['https://calc.example/mcp/', 'orders-api'])
        expect(checkRegistration(withAudience(audience), config(env, extra), [])).toMatchObject({
          ok: false,
          conflict: false,
          problems: [
            expect.stringMatching(/^authorization\.audience: is the audience of a configured/),
          ],
        });
      expect(
        checkRegistration(withAudience('https://x.example/mcp'), config(env, extra), []),
      ).toMatchObject({ ok: true });
    });

    it('the audience of an upstream registered before it is a clash (409) naming that upstream', () => {
      const first = checkRegistration(
        withAudience('https://payments.example/mcp'),
        config(env, gatewayAuth),
        [],
      );
      expect(first).toMatchObject({ ok: true });
      if (!first.ok) return;
      const second = (audience: string) => ({
        ...withAudience(audience),
        id: 'harvest',
        url: 'http://10.0.0.9/mcp',
        namePrefix: 'harvest__',
      });
      for (const audience of ['https://PAYMENTS.example:443/mcp/', 'https://payments.example/mcp'])
        expect(
          checkRegistration(second(audience), config(env, gatewayAuth), [first.upstream]),
        ).toEqual({
          ok: false,
          conflict: true,
          problems: [
            `authorization.audience: is the audience of registered upstream "${first.upstream.id}": ` +
              "every caller's token for that upstream would go to this server too",
          ],
        });
      // another audience is accepted beside it
      expect(
        checkRegistration(second('https://harvest.example/mcp'), config(env, gatewayAuth), [
          first.upstream,
        ]),
      ).toMatchObject({ ok: true });
    });

    it('a scope including the admin scope is refused naming authorization.scope', () => {
      expect(
        checkRegistration(
          withAudience('https://x.example/mcp', 'openid  mcp:admin'),
          config(env, gatewayAuth),
          [],
        ),
      ).toMatchObject({
        ok: false,
        conflict: false,
        problems: [expect.stringMatching(/^authorization\.scope: includes the admin scope/)],
      });
      expect(
        checkRegistration(
          withAudience('https://x.example/mcp', 'tickets:read mcp:admin2'),
          config(env, gatewayAuth),
          [],
        ),
      ).toMatchObject({ ok: true });
    });
  });
});
