import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer as createTls } from 'node:https';
import { createServer as createTcp, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig } from '../support/fixtures';

/**
 * contract §9: lastFailureReason names what went wrong (a type name). docs/tool-service.md §2:
 * "Failures of the pull itself: ManifestConnectError (no connection), ManifestTimeoutError,
 * ManifestHttpStatusError, ManifestTooLargeError", and docs/operations.md §2 says
 * `UnexpectedPullError` is "a bug: please report it with the log line". A Tool Service whose TLS
 * certificate the gateway does not trust, or a manifestUrl that reaches something that does not
 * speak HTTP, is a reachability / configuration problem of that bundle, not a gateway bug.
 */
describe('the failure reason of a pull that never got an HTTP answer', () => {
  const track = stopAfterEach();

  function listening(server: Server): Promise<number> {
    return new Promise((resolve) =>
      server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)),
    );
  }

  it('is a documented pull failure, never UnexpectedPullError (untrusted TLS certificate; not HTTP)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tls-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '2',
        '-subj',
        '/CN=127.0.0.1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    const tls = createTls(
      { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) },
      (_req, res) => res.end('{}'),
    );
    const tlsPort = await listening(tls);
    track({
      stop: () =>
        new Promise((r) => {
          tls.closeAllConnections();
          tls.close(r);
        }),
    });
    const sockets = new Set<import('node:net').Socket>();
    const garbage = createTcp((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.end('SSH-2.0-OpenSSH_9.6\r\n');
    });
    const garbagePort = await listening(garbage);
    track({
      stop: () =>
        new Promise((r) => {
          for (const x of sockets) x.destroy();
          garbage.close(r);
        }),
    });

    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([
          bundle(
            'tls',
            {
              manifestUrl: `https://127.0.0.1:${tlsPort}/m`,
              baseEndpoint: `https://127.0.0.1:${tlsPort}/mcp`,
            },
            'tls.',
          ),
          bundle(
            'ssh',
            {
              manifestUrl: `http://127.0.0.1:${garbagePort}/m`,
              baseEndpoint: `http://127.0.0.1:${garbagePort}/mcp`,
            },
            'ssh.',
          ),
        ]),
      }),
    );
    await waitFor(async () =>
      (await gateway.toolBundles()).bundles.every((b: any) => b.consecutiveFailures > 0),
    );
    const reasons = (await gateway.toolBundles()).bundles.map((b: any) => [
      b.id,
      b.lastFailureReason,
    ]);
    const documented = [
      'ManifestConnectError',
      'ManifestTimeoutError',
      'ManifestHttpStatusError',
      'ManifestTooLargeError',
      'ManifestNotJsonError',
    ];
    expect(reasons.filter(([, reason]: string[]) => !documented.includes(reason ?? ''))).toEqual(
      [],
    );
  });
});
