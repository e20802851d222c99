import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest } from '../support/fixtures';
import { TestToolService } from '../support/tool-service';

/**
 * Contract §9 (GET /actuator/toolBundles): "응답에 manifestUrl과 namePrefix는 넣지 않는다 …
 * lastFailureReason도 메시지가 아니라 예외 타입 이름만 담는다. 메시지에는 URL이나 응답 조각이 섞일 수
 * 있다." (the response carries neither manifestUrl nor namePrefix; the failure is reported as the
 * exception type name only, not a message, because a message may carry a URL or a fragment of the
 * answer).
 *
 * The gateway reports a rejected manifest with an extra `detail` message beside
 * lastFailureReason (libs/registry/src/state/bundle-record.ts `detail`,
 * libs/registry/src/bundle/bundle-intake.ts `accepted`), and that message quotes the tool name
 * from the Tool Service's answer: a fragment of the answer, here an internal host name, and
 * with it the bundle's namePrefix.
 */
describe('bundle status carries the failure type only (contract §9)', () => {
  const track = stopAfterEach();

  it('shows no message quoting the answer for a rejected manifest', async () => {
    const leaked = 'ins.db-master.ax-hub.svc.cluster.local';
    // a valid name, but _meta.version is missing: the manifest is rejected (ToolVersionError)
    const service = track(
      await TestToolService.start(
        manifest('ins', [
          {
            name: leaked,
            description: 'Looks a policy up.',
            inputSchema: { type: 'object', properties: {} },
            _meta: {},
          },
        ]),
      ),
    );
    const gateway = track(
      await GatewayProcess.start({ mcp: gatewayConfig([bundle('ins', service, 'ins.')]) }),
    );
    await waitFor(async () => (await gateway.bundleStatus('ins')).lastFailureReason !== null);
    const view = await gateway.toolBundles();
    const status = view.bundles[0];
    expect(status).toMatchObject({ status: 'unreachable', lastFailureReason: 'ToolVersionError' });
    const text = JSON.stringify(view);
    // no fragment of the answer (an internal host name) and no namePrefix in the status
    expect(text).not.toContain('svc.cluster.local');
    expect(text).not.toContain('"ins.');
  });
});
