import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig } from '../support/fixtures';
import { rpc } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

/**
 * Contract §5: "name, title, description, inputSchema, outputSchema, annotations는 MCP가
 * tools/list로 그대로 공개한다" (the gateway publishes these fields in tools/list as they are);
 * docs/tool-service.md §2: "Everything except `_meta` is published to agents exactly as you wrote
 * it."
 *
 * A manifest is JSON text, and its numbers are decimals: `1e400` and `12345678901234567890` are
 * valid JSON numbers (RFC 8259 §6 sets no range). Read into doubles and written again they would
 * reach agents as `null` (no longer a valid JSON Schema keyword value) and
 * `12345678901234567000`; the gateway keeps such numbers' texts
 * (libs/registry/src/manifest/number-texts.ts), on the event loop for a small manifest and in the
 * validation worker for a large one.
 */
describe('inputSchema numbers in tools/list (contract §5 "그대로 공개")', () => {
  const track = stopAfterEach();

  it('publishes a schema bound as the manifest wrote it, never null or another number', async () => {
    const manifestText =
      '{"bundleId":"num","revision":"r1","tools":[{"name":"num.lookup","description":"Looks up a record by its numeric id.",' +
      '"inputSchema":{"type":"object","properties":{' +
      '"id":{"type":"integer","minimum":0,"maximum":12345678901234567890},' +
      '"score":{"type":"number","maximum":1e400}},"required":["id"]},' +
      '"_meta":{"version":"1.0.0"}}]}';
    const service = track(await TestToolService.start({}));
    service.manifest = () => ({
      headers: { 'content-type': 'application/json' },
      body: manifestText,
    });
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('num', service, 'num.')]),
        waitReady: true,
      }),
    );
    expect(await gateway.bundleStatus('num')).toMatchObject({ status: 'healthy' });
    const list = await rpc(gateway.mcpUrl, 'tools/list');
    // the published schema as text, to see its numbers as written
    const published = /"inputSchema":(\{.*?\}\},"required":\["id"\]\})/.exec(list.text)?.[1];
    expect(published).toBe(
      '{"type":"object","properties":{' +
        '"id":{"type":"integer","minimum":0,"maximum":12345678901234567890},' +
        '"score":{"type":"number","maximum":1e400}},"required":["id"]}',
    );
    // at the very least, a keyword that must be a number never becomes null
    expect(list.json.result.tools[0].inputSchema.properties.score.maximum).not.toBeNull();
  });

  it('keeps them in a manifest large enough to be validated in the worker', async () => {
    // 3,000 tools, about 600 KB: over the worker's threshold (256 KB)
    const filler = Array.from(
      { length: 3000 },
      (_, i) =>
        `{"name":"num.t${i}","description":"Filler tool number ${i}, here to make the manifest large.",` +
        `"inputSchema":{"type":"object","properties":{"n":{"type":"integer","maximum":${1000 + i}}}},"_meta":{"version":"1.0.0"}}`,
    );
    const manifestText =
      '{"bundleId":"num","revision":"r1","tools":[{"name":"num.big","description":"Big numbers.",' +
      '"inputSchema":{"type":"object","properties":{"x":{"type":"number","maximum":1e400,"multipleOf":0.50}}},' +
      `"_meta":{"version":"1.0.0"}},${filler.join(',')}]}`;
    const service = track(await TestToolService.start({}));
    service.manifest = () => ({
      headers: { 'content-type': 'application/json' },
      body: manifestText,
    });
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([bundle('num', service, 'num.')], {
          discovery: { maxToolsPerBundle: 5000, maxToolsTotal: 5000 },
        }),
        waitReady: true,
      }),
    );
    expect(await gateway.bundleStatus('num')).toMatchObject({ status: 'healthy' });
    const list = await rpc(gateway.mcpUrl, 'tools/list');
    expect(list.text).toContain(
      '"inputSchema":{"type":"object","properties":{"x":{"type":"number","maximum":1e400,"multipleOf":0.50}}}',
    );
    expect(list.text).toContain('"maximum":1999');
  });
});
