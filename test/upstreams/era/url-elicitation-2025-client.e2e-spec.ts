/**
 * A 2026 upstream's URL-mode elicitation bridged to a 2025-11-25 client.
 *
 * 2026-07-28 removed `elicitationId` (S26-chg minor #11; wire notes G-18); 2025-11-25 requires it
 * on every URL-mode `elicitation/create` (SCH25 `ElicitRequestURLParams.elicitationId`: "The ID of
 * the elicitation, which must be unique within the context of the server"; the official v1 SDK
 * client refuses a request without it). docs/operations.md §11: the upstream's input_required
 * "becomes real requests on the client's SSE call answer" — they must be valid requests of the
 * client's revision. The gateway already strips elicitationId the other way (mrtr-calls.service.ts).
 */
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { GatewayProcess } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { ScriptedUpstream, upTool } from '../../support/scripted-upstream';
import { connectV1 } from '../../support/sdk-clients';

describe('era bridging: URL-mode elicitation of a 2026 upstream to a 2025 client', () => {
  let up: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    up = await ScriptedUpstream.start({ era: '2026', tools: [upTool('login')] });
    up.onTool('login', (req) =>
      req.params?.inputResponses?.signin !== undefined
        ? {
            result: {
              resultType: 'complete',
              content: [
                {
                  type: 'text',
                  text: `signed in: ${JSON.stringify(req.params.inputResponses.signin)}`,
                },
              ],
            },
          }
        : {
            result: {
              resultType: 'input_required',
              inputRequests: {
                signin: {
                  method: 'elicitation/create',
                  params: {
                    mode: 'url',
                    message: 'Sign in first',
                    url: 'https://auth.example.com/login',
                  },
                },
              },
              requestState: 'rs',
            },
          },
    );
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], { upstreams: [upstream('m', up.url, { protocol: '2026-07-28' })] }),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await up?.stop();
  });

  it('the relayed elicitation/create carries an elicitationId (SCH25), the v1 client accepts it, and the call completes', async () => {
    const client = await connectV1(gateway.mcpUrl, {}, { elicitation: { url: {} } });
    const seen: unknown[] = [];
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      seen.push(request.params);
      return { action: 'accept' };
    });
    try {
      const result = await client.callTool({ name: 'm__login', arguments: {} });
      expect(seen).toHaveLength(1);
      expect(typeof (seen[0] as { elicitationId?: unknown }).elicitationId).toBe('string');
      expect(result.isError).not.toBe(true);
      expect((result.content as { text: string }[])[0]?.text).toBe(
        'signed in: {"action":"accept"}',
      );
    } finally {
      await client.close();
    }
  });
});
