import type { GatewayConfig } from '@app/config';
import type { RegistryService } from '@app/registry';
import { SerializedResult } from '../methods/method-handler';
import type { HttpAnswer } from '../answers/http-answer';
import { LegacyCodec } from './legacy.codec';
import { ModernCodec } from './modern.codec';
import { VirtualServers } from '../servers/virtual-servers.service';

const config = { mcp: { listen: { maxQueuedBytes: 1 << 20 } } } as unknown as GatewayConfig;
const none = {} as never;
/** The gateway's own identity (no virtual server): serverInfo {name: gw, version: 1.2.3}. */
const servers = new VirtualServers(
  {
    version: '1.2.3',
    bundles: [],
    upstreams: [],
    mcp: { identity: 'gw', toolTags: [], virtualServers: [] },
  } as unknown as GatewayConfig,
  {} as RegistryService,
);
const gateway = servers.identityOf(undefined);

/** ModernCodec's private result writer, reached for these checks. */
interface ModernResult {
  result(
    id: number,
    method: string,
    r: unknown,
    caps: object,
    access: undefined,
    identity: typeof gateway,
  ): HttpAnswer;
}

/** An upstream's result as its own text: spelling the parsed value would not give back. */
const text = '{"content":[{"type":"text","text":"caf\\u00e9"}],"n":1.50,"_meta":{"k":1}}';
const passed = () => new SerializedResult(text, JSON.parse(text) as Record<string, unknown>);

describe('a SerializedResult (an upstream result passed on) in the codecs', () => {
  it('2025 era: written as its text, inside the envelope, JSON and SSE', () => {
    const codec = new LegacyCodec(config, none, none, none, none, none, none);
    const answer = (format: 'json' | 'sse'): HttpAnswer =>
      (
        codec as unknown as {
          resultAnswer(id: number, r: unknown, f: 'json' | 'sse'): HttpAnswer;
        }
      ).resultAnswer(7, passed(), format);
    expect(answer('json').body).toBe(`{"jsonrpc":"2.0","id":7,"result":${text}}`);
    expect(answer('sse').body).toBe(
      `event: message\ndata: {"jsonrpc":"2.0","id":7,"result":${text}}\n\n`,
    );
  });

  it('2026 era: the parsed value gets resultType and the gateway serverInfo, its _meta kept', () => {
    const codec = new ModernCodec(config, none, none, servers);
    const answer = (codec as unknown as ModernResult).result(
      7,
      'tools/call',
      passed(),
      {},
      undefined,
      gateway,
    );
    expect(JSON.parse(answer.body as string)).toEqual({
      jsonrpc: '2.0',
      id: 7,
      result: {
        content: [{ type: 'text', text: 'café' }],
        n: 1.5,
        resultType: 'complete',
        _meta: { k: 1, 'io.modelcontextprotocol/serverInfo': { name: 'gw', version: '1.2.3' } },
      },
    });
  });

  it('2026 era: a result without _meta is passed on as its text, the 2026 members appended', () => {
    const codec = new ModernCodec(config, none, none, servers);
    const own = '{"content":[{"type":"text","text":"caf\\u00e9"}],"n":1.50}';
    const answer = (codec as unknown as ModernResult).result(
      7,
      'tools/call',
      new SerializedResult(own, JSON.parse(own) as Record<string, unknown>),
      {},
      undefined,
      gateway,
    );
    expect(answer.body).toBe(
      `{"jsonrpc":"2.0","id":7,"result":${own.slice(0, -1)},"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"gw","version":"1.2.3"}}}}`,
    );
    expect(JSON.parse(answer.body as string).result.n).toBe(1.5);
  });
});
