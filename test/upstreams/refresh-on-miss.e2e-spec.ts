import { gatewayConfig, upstream } from '../support/fixtures';
import { GatewayProcess } from '../support/gateway-process';
import { rpc } from '../support/rpc';
import { ScriptedUpstream } from '../support/scripted-upstream';

/**
 * A name or URI this replica's catalog lacks gets one refresh of the sources before "unknown"
 * (contract §8: replicas' catalogs may briefly differ; an upstream may have added it since the
 * last pull and told nobody), for every method that routes by a catalog entry — `tools/call` and
 * `prompts/get` did, `completion/complete` and `resources/read` did not: a completion for a
 * prompt the catalog did not have yet was `-32602 unknown completion ref` (seen once in four
 * runs of the 0.1.16 conformance suite through the gateway). Each case is repeated, an entry
 * added anew each time, so a refresh that only sometimes happens fails here.
 */
describe('an entry the catalog lacks gets one refresh before "unknown"', () => {
  let up: ScriptedUpstream;
  /** A second upstream serving resources: with one, every URI would be its (operations §10 "Routing"). */
  let other: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    up = await ScriptedUpstream.start({
      prompts: [{ name: 'first', arguments: [{ name: 'topic' }] }],
      resources: [{ uri: 'kb://first', name: 'first' }],
      capabilities: { tools: {}, resources: {}, prompts: {}, completions: {} },
    });
    other = await ScriptedUpstream.start({
      resources: [{ uri: 'other://r', name: 'r' }],
      capabilities: { tools: {}, resources: {} },
    });
    up.on('completion/complete', (req) => ({
      result: { completion: { values: [`for ${JSON.stringify(req.params?.ref)}`] } },
    }));
    up.on('resources/read', (req) => ({
      result: { contents: [{ uri: req.params?.uri, text: `read ${req.params?.uri}` }] },
    }));
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], { upstreams: [upstream('kb', up.url), upstream('other', other.url)] }),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await up?.stop();
    await other?.stop();
  });

  const session = async (): Promise<Record<string, string>> => {
    const init = await rpc(gateway.mcpUrl, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'refresh-on-miss', version: '1' },
    });
    return { 'mcp-session-id': init.headers.get('mcp-session-id') as string };
  };

  it('completion/complete for a prompt added since the last pull: pulled once more, then forwarded (5 rounds)', async () => {
    const headers = await session();
    for (let round = 1; round <= 5; round++) {
      const name = `added-${round}`;
      up.prompts.push({ name, arguments: [{ name: 'topic' }] });
      const pullsBefore = up.rpcs('prompts/list').length;
      const answer = await rpc(
        gateway.mcpUrl,
        'completion/complete',
        {
          ref: { type: 'ref/prompt', name: `kb__${name}` },
          argument: { name: 'topic', value: 'x' },
        },
        headers,
      );
      expect(answer.json.error).toBeUndefined();
      expect(answer.json.result.completion.values).toEqual([
        `for ${JSON.stringify({ type: 'ref/prompt', name })}`,
      ]);
      expect(up.rpcs('prompts/list').length).toBeGreaterThan(pullsBefore);
    }
  });

  it('completion/complete and resources/read for a resource added since the last pull (5 rounds each)', async () => {
    const headers = await session();
    for (let round = 1; round <= 5; round++) {
      const uri = `kb://added-${round}`;
      up.resources.push({ uri, name: `added-${round}` });
      const pullsBefore = up.rpcs('resources/list').length;
      const completed = await rpc(
        gateway.mcpUrl,
        'completion/complete',
        { ref: { type: 'ref/resource', uri }, argument: { name: 'x', value: '' } },
        headers,
      );
      expect(completed.json.error).toBeUndefined();
      expect(up.rpcs('resources/list').length).toBeGreaterThan(pullsBefore);
      const readUri = `kb://read-${round}`;
      up.resources.push({ uri: readUri, name: `read-${round}` });
      const read = await rpc(gateway.mcpUrl, 'resources/read', { uri: readUri }, headers);
      expect(read.json.error).toBeUndefined();
      expect(read.json.result.contents).toEqual([{ uri: readUri, text: `read ${readUri}` }]);
    }
  });

  it('a ref no source has is still unknown after that one refresh', async () => {
    const headers = await session();
    const pullsBefore = up.rpcs('prompts/list').length;
    const answer = await rpc(
      gateway.mcpUrl,
      'completion/complete',
      { ref: { type: 'ref/prompt', name: 'kb__never' }, argument: { name: 'topic', value: '' } },
      headers,
    );
    expect(answer.json.error).toMatchObject({
      code: -32602,
      message: 'Invalid params: unknown completion ref',
    });
    expect(up.rpcs('prompts/list').length).toBe(pullsBefore + 1);
    const read = await rpc(gateway.mcpUrl, 'resources/read', { uri: 'kb://never' }, headers);
    expect(read.json.error).toMatchObject({
      code: -32602,
      message: 'Resource not found: kb://never',
    });
  });
});
