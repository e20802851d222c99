import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { rpc } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

/**
 * Contract §3: `fallbackManifestFile` is "최초 원격 조회가 실패했을 때만 읽는 같은 매니페스트 형식의
 * cold-start fallback" (read only when the first remote pull fails) and never overwrites "원격 정상
 * 목록이나 직전 성공본" (a valid remote list or the last good copy); §9 `fallback`: "최초 원격 조회에
 * 실패해 local manifest sample을 사용 중" (the first remote pull failed and the local sample is in
 * use); §11: "기동 중 원천 장애 … local profile에 fallback 파일이 있으면 최초 실패 때만 채택" (source
 * failure during start: with a fallback file in the local profile it is adopted on the first
 * failure).
 *
 * §6 lists what a failed pull is: "성공 + 검증 실패 → 직전 성공본 유지. 실패 횟수 증가" next to
 * "timeout / 연결 실패 / 5xx"; the gateway itself counts a rejected manifest as a failed pull
 * (consecutiveFailures, `degraded`). A first pull answered 200 with a body that is no valid manifest
 * (here the HTML page a proxy answers, ManifestNotJsonError; or a manifest that breaks §5) gives no
 * remote list at all, so the fallback file must be served. The gateway reads the fallback file only
 * for network/status failures (libs/discovery/src/bundle-manifest-puller.ts: only the
 * `!fetched.ok` branch reads it): the bundle stays `unreachable`, no catalog, not ready.
 */
describe('fallbackManifestFile after a first pull that is answered but unusable (contract §3, §9, §11)', () => {
  const track = stopAfterEach();

  function fallbackFile(): string {
    const dir = mkdtempSync(join(tmpdir(), 'mcpgw-fb-inv-'));
    const file = join(dir, 'fallback.json');
    writeFileSync(
      file,
      JSON.stringify(manifest('ins', [tool({ name: 'ins.sample' })], 'local-sample-v1')),
    );
    return file;
  }

  async function gatewayFor(service: TestToolService): Promise<GatewayProcess> {
    return track(
      await GatewayProcess.start({
        mcp: gatewayConfig(
          [bundle('ins', service, 'ins.', { fallbackManifestFile: `file:${fallbackFile()}` })],
          // the next pull is a minute away: only the first one decides
          { registry: { refreshIntervalSeconds: 60, refreshJitterSeconds: 0 } },
        ),
        env: { APP_PROFILE: 'local' },
      }),
    );
  }

  async function firstAttemptDone(gateway: GatewayProcess): Promise<any> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const status = await gateway.bundleStatus('ins');
      // the first round is committed: its failure counted, or a copy adopted
      if (status.consecutiveFailures > 0 || status.source !== null || Date.now() > deadline)
        return status;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('serves the fallback file when the first pull answers 200 with an HTML page (not a manifest)', async () => {
    const service = track(await TestToolService.start({}));
    service.manifest = () => ({
      status: 200,
      headers: { 'content-type': 'text/html' },
      body: '<html><body>502 Bad Gateway (proxy)</body></html>',
    });
    const gateway = await gatewayFor(service);
    const status = await firstAttemptDone(gateway);
    expect(status.lastFailureReason).toBe('ManifestNotJsonError');
    expect(status).toMatchObject({ status: 'fallback', source: 'fallback' });
    const list = await rpc(gateway.mcpUrl, 'tools/list');
    expect(list.json.result?.tools?.map((t: any) => t.name)).toEqual(['ins.sample']);
  });

  it('serves the fallback file when the first pull answers a manifest the rules reject', async () => {
    // bundleId of another service: §5 "다르면 그 응답을 버린다" (the answer is discarded)
    const service = track(
      await TestToolService.start(manifest('other', [tool({ name: 'ins.live' })], 'live-1')),
    );
    const gateway = await gatewayFor(service);
    const status = await firstAttemptDone(gateway);
    expect(status.lastFailureReason).toBe('BundleIdMismatchError');
    expect(status).toMatchObject({ status: 'fallback', source: 'fallback' });
    const list = await rpc(gateway.mcpUrl, 'tools/list');
    expect(list.json.result?.tools?.map((t: any) => t.name)).toEqual(['ins.sample']);
  });
});
