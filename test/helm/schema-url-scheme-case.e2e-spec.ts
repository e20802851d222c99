import { removeScratchDir, runHelm, CHART_DIR, writeValuesFile } from './chart';
import { helmBinary } from './helm-binary';
import { stopAfterEach } from '../support/cleanup';
import { gatewayConfig, manifest, tool } from '../support/fixtures';
import { GatewayProcess } from '../support/gateway-process';
import { TestToolService } from '../support/tool-service';

beforeAll(() => {
  helmBinary();
}, 120_000);
afterAll(removeScratchDir);

/**
 * helm/mcp-gateway/README.md "Values checked before install": the schema is held to the
 * gateway's own config model and must not refuse a config the gateway boots with. The gateway
 * checks every http(s) URL with WHATWG `new URL()` (config-rules.ts urlProblem, load-config.ts
 * isHttpUrl, auth-rules.ts httpUrl), where a URL scheme is case-insensitive (RFC 3986 §3.1):
 * `HTTP://host/…` is an http URL and the gateway boots on it and pulls from it, so the schema's
 * URL patterns take the scheme in any case.
 *
 * And the other way: what the model refuses at boot (rateLimits.*.refillPerSecond under its
 * @Min of 0.000001, an upstream url over its @MaxLength) `helm install` refuses too, instead of
 * a pod in a crash loop.
 */
const upper = (url: string): string => url.replace(/^http:/, 'HTTP:');

describe('gateway.config URLs with an upper-case scheme', () => {
  const track = stopAfterEach();

  it('boot the gateway, which pulls the bundle from them', async () => {
    const service = track(
      await TestToolService.start(manifest('tools', [tool({ name: 'tools.t' })])),
    );
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([
          {
            id: 'tools',
            manifestUrl: upper(service.manifestUrl),
            baseEndpoint: upper(service.baseEndpoint),
            namePrefix: 'tools.',
          },
        ]),
        waitReady: true,
      }),
    );
    const status: any = await (await fetch(`${gateway.managementUrl}/actuator/toolBundles`)).json();
    expect(status.bundles[0].status).toBe('healthy');
  });

  it('boot the gateway as mcp.auth audience and jwksUrl, and as an upstream url', async () => {
    const gateway = track(
      await GatewayProcess.start({
        mcp: {
          identity: 'gw',
          upstreams: [{ id: 'up', url: 'HTTP://127.0.0.1:9/mcp' }],
          auth: {
            mode: 'jwt',
            issuer: 'https://idp.example.com',
            audience: 'HTTPS://gw.example.com/mcp',
            jwksUrl: 'Https://idp.example.com/jwks',
          },
        },
        env: { APP_PROFILE: 'ocp' },
      }),
    );
    expect(gateway.exitCode).toBeNull();
    expect(gateway.output).toMatch(/audience HTTPS:\/\/gw\.example\.com\/mcp/);
  });

  it('are accepted by helm template', () => {
    const file = writeValuesFile('url-scheme-case.yaml', {
      gateway: {
        config: {
          mcp: {
            identity: 'gw',
            bundles: [
              {
                id: 'tools',
                manifestUrl: 'HTTP://tool-service.tools.svc:8080/tool-manifest',
                baseEndpoint: 'HTTP://tool-service.tools.svc:8080/mcp',
                namePrefix: 'tools.',
              },
            ],
            upstreams: [{ id: 'up', url: 'HTTP://up.tools.svc:8080/mcp' }],
            auth: {
              mode: 'jwt',
              issuer: 'https://idp.example.com',
              audience: 'HTTPS://gw.example.com/mcp',
              jwksUrl: 'Https://idp.example.com/jwks',
            },
          },
        },
      },
      networkPolicy: {
        egress: {
          upstreams: [{ to: [{ ipBlock: { cidr: '10.0.0.0/8' } }], ports: [{ port: 8080 }] }],
          identityProvider: [{ to: [{ ipBlock: { cidr: '10.0.0.0/8' } }], ports: [{ port: 443 }] }],
        },
      },
    });
    const result = runHelm(['template', 'r', CHART_DIR, '-f', file]);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });
});

describe('rateLimits refillPerSecond below the model minimum (0.000001)', () => {
  const track = stopAfterEach();
  const rateLimits = { perSubject: { capacity: 10, refillPerSecond: 0.0000005 } };

  it('the gateway refuses it at boot', async () => {
    const started = await GatewayProcess.start({
      mcp: { identity: 'gw', upstreams: [{ id: 'up', url: 'http://127.0.0.1:9/mcp' }], rateLimits },
      env: { APP_PROFILE: 'ocp' },
    }).catch((err: Error) => err);
    if (started instanceof GatewayProcess) {
      track(started);
      expect(await started.waitForExit()).toBe(1);
      expect(started.output).toMatch(/mcp\.rateLimits\.perSubject\.refillPerSecond/);
    } else {
      expect(String(started.message)).toMatch(/mcp\.rateLimits\.perSubject\.refillPerSecond/);
    }
  });

  it('helm template refuses it too', () => {
    const file = writeValuesFile('refill-below-min.yaml', {
      gateway: { config: { mcp: { identity: 'gw', rateLimits } } },
    });
    const result = runHelm(['template', 'r', CHART_DIR, '-f', file]);
    expect(result.status).not.toBe(0);
  });
});

/** The model's @MaxLength(2048) on mcp.upstreams[].url (MAX_UPSTREAM_URL_LENGTH) is the schema's maxLength. */
describe('an upstream url over 2048 characters', () => {
  const track = stopAfterEach();
  const url = `http://up.tools.svc:8080/${'a'.repeat(2100)}`;

  it('the gateway refuses it at boot', async () => {
    const started = await GatewayProcess.start({
      mcp: { identity: 'gw', upstreams: [{ id: 'up', url }] },
      env: { APP_PROFILE: 'ocp' },
    }).catch((err: Error) => err);
    if (started instanceof GatewayProcess) {
      track(started);
      expect(await started.waitForExit()).toBe(1);
      expect(started.output).toMatch(/mcp\.upstreams\[0\]\.url/);
    } else {
      expect(String(started.message)).toMatch(/mcp\.upstreams\[0\]\.url/);
    }
  });

  it('helm template refuses it too', () => {
    const file = writeValuesFile('upstream-url-too-long.yaml', {
      gateway: { config: { mcp: { identity: 'gw', upstreams: [{ id: 'up', url }] } } },
      networkPolicy: {
        egress: {
          upstreams: [{ to: [{ ipBlock: { cidr: '10.0.0.0/8' } }], ports: [{ port: 8080 }] }],
        },
      },
    });
    const result = runHelm(['template', 'r', CHART_DIR, '-f', file]);
    expect(result.status).not.toBe(0);
  });
});
