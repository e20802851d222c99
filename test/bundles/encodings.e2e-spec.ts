import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { callTool, rpc } from '../support/rpc';
import { connectV1 } from '../support/sdk-clients';
import { TestToolService, type CannedResponse } from '../support/tool-service';

/** 10 MB of zeros, gzipped: about 10 KB on the wire. */
const GZIP_BOMB = gzipSync(Buffer.alloc(10 * 1024 * 1024));

/** A manifest served compressed, as a Tool Service behind a compressing proxy would. */
function compressedManifest(
  body: unknown,
  encoding: string,
  compress: (b: Buffer) => Buffer,
): () => CannedResponse {
  return () => ({
    headers: { 'content-type': 'application/json', 'content-encoding': encoding },
    body: compress(Buffer.from(JSON.stringify(body))),
  });
}

/**
 * docs/operations.md §7: content encodings and charsets, on manifests (pulled through HttpService)
 * and on tool answers (undici). gzip, deflate and br are decoded; every cap applies to the
 * decoded bytes while they are decoded; text/* is read by its declared charset; an unknown
 * encoding or charset is a failure that says so.
 */
describe('content encodings and charsets', () => {
  describe('tool answers, behind a gzip manifest and a br manifest', () => {
    let service: TestToolService;
    let brService: TestToolService;
    let gateway: GatewayProcess;
    const names = [
      'enc.gzip_text',
      'enc.deflate_json',
      'enc.br_json',
      'enc.stacked',
      'enc.latin1',
      'enc.sjis',
      'enc.bomb',
      'enc.unknown',
      'enc.bad_charset',
      'enc.plain_json',
    ];

    beforeAll(async () => {
      const m = manifest(
        'enc',
        names.map((name) => tool({ name })),
      );
      service = await TestToolService.start(m);
      service.manifest = compressedManifest(m, 'gzip', gzipSync);
      const json = Buffer.from('{ "total": 42.5, "city": "北京" }');
      const answers: Record<string, CannedResponse> = {
        'enc.gzip_text': {
          headers: { 'content-type': 'text/plain', 'content-encoding': 'gzip' },
          body: gzipSync('OK done'),
        },
        'enc.deflate_json': {
          headers: { 'content-type': 'application/json', 'content-encoding': 'deflate' },
          body: deflateSync(json),
        },
        'enc.br_json': {
          headers: { 'content-type': 'application/json', 'content-encoding': 'br' },
          body: brotliCompressSync(json),
        },
        'enc.stacked': {
          headers: { 'content-type': 'text/plain', 'content-encoding': 'gzip, br' },
          body: brotliCompressSync(gzipSync('twice')),
        },
        'enc.latin1': {
          headers: { 'content-type': 'text/plain; charset=iso-8859-1' },
          body: Buffer.from([0x63, 0x61, 0x66, 0xe9]),
        },
        'enc.sjis': {
          headers: { 'content-type': 'text/plain; charset=Shift_JIS' },
          body: Buffer.from([0x93, 0xfa, 0x96, 0x7b]),
        },
        'enc.bomb': {
          headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
          body: GZIP_BOMB,
        },
        'enc.unknown': {
          headers: { 'content-type': 'text/plain', 'content-encoding': 'x-foo' },
          body: 'whatever',
        },
        'enc.bad_charset': {
          headers: { 'content-type': 'text/plain; charset=x-unknown-8' },
          body: 'abc',
        },
        'enc.plain_json': { headers: { 'content-type': 'application/json' }, body: json },
      };
      for (const [name, canned] of Object.entries(answers)) service.tools.set(name, () => canned);

      const brManifest = manifest('brm', [tool({ name: 'brm.echo' })]);
      brService = await TestToolService.start(brManifest);
      brService.manifest = compressedManifest(brManifest, 'br', brotliCompressSync);

      gateway = await GatewayProcess.start({
        mcp: gatewayConfig([bundle('enc', service, 'enc.'), bundle('brm', brService, 'brm.')]),
        waitReady: true,
      });
    });

    afterAll(async () => {
      await gateway?.stop();
      await service?.stop();
      await brService?.stop();
    });

    const textOf = (response: any): string => response.result.content[0].text;

    it('a gzip manifest is accepted (and a br one), and advertised encodings are sent', async () => {
      expect(await gateway.bundleStatus('enc')).toMatchObject({
        status: 'healthy',
        toolCount: names.length,
        lastFailureReason: null,
      });
      expect(await gateway.bundleStatus('brm')).toMatchObject({ status: 'healthy', toolCount: 1 });
      const listed = (await rpc(gateway.mcpUrl, 'tools/list')).json.result.tools.map(
        (t: { name: string }) => t.name,
      );
      expect(listed).toEqual(['brm.echo', ...[...names].sort()]);
      expect(service.manifestRequests()[0]?.headers['accept-encoding']).toBe('gzip, deflate, br');
    });

    it('text/plain with content-encoding gzip gives isError false and the decoded text (official v1 client)', async () => {
      const client = await connectV1(gateway.mcpUrl);
      try {
        const result = await client.callTool({ name: 'enc.gzip_text', arguments: {} });
        expect(result.isError).toBeUndefined();
        expect(result.content).toEqual([
          { type: 'text', text: 'OK done', _meta: { searchTime: expect.any(Number) } },
        ]);
      } finally {
        await client.close();
      }
    });

    it.each(['enc.deflate_json', 'enc.br_json', 'enc.plain_json'])(
      '%s: a JSON answer is decoded and compacted as usual',
      async (name) => {
        const response = await callTool(gateway.mcpUrl, name);
        expect(response.result.isError).toBeUndefined();
        expect(textOf(response)).toBe('{"total":42.5,"city":"北京"}');
      },
    );

    it('decodes stacked encodings in reverse order (gzip, br: brotli first)', async () => {
      expect(textOf(await callTool(gateway.mcpUrl, 'enc.stacked'))).toBe('twice');
    });

    it('text/plain; charset=iso-8859-1 bytes 63 61 66 E9 come back as "café"', async () => {
      const response = await callTool(gateway.mcpUrl, 'enc.latin1');
      expect(response.result.isError).toBeUndefined();
      expect(textOf(response)).toBe('café');
    });

    it('reads another declared charset (Shift_JIS)', async () => {
      expect(textOf(await callTool(gateway.mcpUrl, 'enc.sjis'))).toBe('日本');
    });

    it('a gzip bomb answer (10 MB of zeros) fails as oversized once decoded, and the gateway keeps serving', async () => {
      const response = await callTool(gateway.mcpUrl, 'enc.bomb');
      expect(response.result.isError).toBe(true);
      expect(textOf(response)).toBe(
        `Tool enc.bomb failed: the Tool Service's answer exceeded ${8 * 1048576} bytes once decoded.`,
      );
      expect(textOf(await callTool(gateway.mcpUrl, 'enc.latin1'))).toBe('café');
    });

    it('an unknown content-encoding is isError with the reason', async () => {
      const response = await callTool(gateway.mcpUrl, 'enc.unknown');
      expect(response.result.isError).toBe(true);
      expect(textOf(response)).toBe(
        `Tool enc.unknown failed: the Tool Service's answer could not be read: unsupported content-encoding "x-foo" (supported: gzip, deflate, br, identity).`,
      );
    });

    it('an unknown charset is isError with the reason', async () => {
      const response = await callTool(gateway.mcpUrl, 'enc.bad_charset');
      expect(response.result.isError).toBe(true);
      expect(textOf(response)).toBe(
        `Tool enc.bad_charset failed: the Tool Service's answer could not be read: unknown charset "x-unknown-8".`,
      );
    });
  });

  describe('manifests that cannot be read', () => {
    const track = stopAfterEach();

    it('a gzip bomb manifest fails as ManifestTooLargeError; an unknown encoding as ManifestNotJsonError naming it in the log', async () => {
      const bombService = track(await TestToolService.start(manifest('bomb', [])));
      bombService.manifest = () => ({
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
        body: GZIP_BOMB,
      });
      const oddService = track(await TestToolService.start(manifest('odd', [])));
      oddService.manifest = () => ({
        headers: { 'content-type': 'application/json', 'content-encoding': 'compress' },
        body: '{"bundleId":"odd","revision":"r1","tools":[]}',
      });
      const gateway = track(
        await GatewayProcess.start({
          mcp: gatewayConfig([
            bundle('bomb', bombService, 'bomb.'),
            bundle('odd', oddService, 'odd.'),
          ]),
        }),
      );
      await waitFor(async () => (await gateway.bundleStatus('odd')).lastAttemptAt !== null);
      await waitFor(async () => (await gateway.bundleStatus('bomb')).lastAttemptAt !== null);
      expect(await gateway.bundleStatus('bomb')).toMatchObject({
        status: 'unreachable',
        lastFailureReason: 'ManifestTooLargeError',
      });
      expect(await gateway.bundleStatus('odd')).toMatchObject({
        status: 'unreachable',
        lastFailureReason: 'ManifestNotJsonError',
      });
      // the log line is JSON: the quotes around the name are escaped
      await gateway.waitForOutput(
        /ManifestNotJsonError: unsupported content-encoding \\"compress\\"/,
      );
      expect((await gateway.readiness()).status).toBe(503);
    });
  });
});
