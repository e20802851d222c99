import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { rpc } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

/**
 * docs/operations.md §2 "Large manifests": a manifest validated in the worker thread (256 KB or
 * more) has "the same rules and the same outcome"
 * as one validated on the event loop. `_meta.tags` (docs/operations.md §16) decide which tools a
 * tag-selected virtual server holds, so the outcome includes them.
 */
describe('manifest validated in the worker thread', () => {
  const track = stopAfterEach();

  async function refsToolNames(extraTools: Record<string, unknown>[]): Promise<string[]> {
    const service = track(
      await TestToolService.start(
        manifest('ins', [tool({ name: 'ins.ref', meta: { tags: ['reference'] } }), ...extraTools]),
      ),
    );
    const gateway = track(
      await GatewayProcess.start({
        mcp: {
          ...gatewayConfig([bundle('ins', service, 'ins.')]),
          virtualServers: [{ id: 'refs', tags: ['reference'] }],
        },
      }),
    );
    await gateway.waitForReady();
    const listed = await rpc(`${gateway.mcpUrl}/servers/refs`, 'tools/list');
    return (listed.json?.result?.tools ?? []).map((t: { name: string }) => t.name);
  }

  it("keeps a tool's _meta.tags: the tag-selected server lists it as it does for a small manifest", async () => {
    // small manifest: validated on the event loop
    expect(await refsToolNames([tool({ name: 'ins.small' })])).toEqual(['ins.ref']);
    // the same tagged tool in a manifest of more than 256 KB: validated in the worker
    expect(
      await refsToolNames([tool({ name: 'ins.long', description: 'x'.repeat(300_000) })]),
    ).toEqual(['ins.ref']);
  });
});
