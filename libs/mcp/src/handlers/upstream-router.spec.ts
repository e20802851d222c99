import type { UpstreamDefinition } from '@app/config';
import type { UpstreamExecutor, UpstreamOutcome } from '@app/execution';
import type { RegistryService } from '@app/registry';
import type { RelayIds } from '../relay/relay-ids';
import { SerializedResult, type MethodContext } from './method-handler';
import { UpstreamRouter } from './upstream-router';

const upstream = { id: 'up' } as UpstreamDefinition;
const context: MethodContext = { protocolVersion: '2025-11-25', headers: {}, rawBody: '' };

function routerAnswering(outcome: UpstreamOutcome): UpstreamRouter {
  const executor = { forward: () => Promise.resolve(outcome) } as unknown as UpstreamExecutor;
  return new UpstreamRouter(
    executor,
    {} as RelayIds,
    {
      enabledUpstreams: () => [],
    } as unknown as RegistryService,
  );
}

describe('UpstreamRouter.forward: the result as the upstream wrote it', () => {
  it('passes a 2025 result on as its own text (numbers and escapes as sent)', async () => {
    const resultText = '{"content":[{"type":"text","text":"caf\\u00e9"}],"n":1.50}';
    const result = JSON.parse(resultText) as Record<string, unknown>;
    const answer = await routerAnswering({ kind: 'result', result, resultText }).forward(
      upstream,
      'tools/call',
      {},
      context,
    );
    expect(answer).toBeInstanceOf(SerializedResult);
    expect((answer as SerializedResult).json).toBe(resultText);
    expect((answer as SerializedResult).value).toBe(result);
  });

  it('serializes a 2026 result again once its envelope members are left out', async () => {
    const resultText =
      '{"content":[],"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}';
    const answer = await routerAnswering({
      kind: 'result',
      result: JSON.parse(resultText) as Record<string, unknown>,
      resultText,
    }).forward(upstream, 'tools/call', {}, context);
    expect(answer).toEqual({ content: [] });
    expect(answer).not.toBeInstanceOf(SerializedResult);
  });

  it('serializes a result whose text holds a line break (it must fit in one SSE data line)', async () => {
    const resultText = '{\n  "content": []\n}';
    const answer = await routerAnswering({
      kind: 'result',
      result: JSON.parse(resultText) as Record<string, unknown>,
      resultText,
    }).forward(upstream, 'tools/call', {}, context);
    expect(answer).toEqual({ content: [] });
    expect(answer).not.toBeInstanceOf(SerializedResult);
  });

  it('returns the object when there is no text', async () => {
    const result = { content: [] };
    const answer = await routerAnswering({ kind: 'result', result }).forward(
      upstream,
      'tools/call',
      {},
      context,
    );
    expect(answer).toBe(result);
  });
});
