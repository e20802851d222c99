import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { callTool } from '../support/rpc';
import { connectV1 } from '../support/sdk-clients';
import { TestToolService } from '../support/tool-service';

/**
 * docs/operations.md §7 "Retry-After": a Tool Service's Retry-After on a 4xx/5xx answer reaches the
 * agent, in the result text and in content[0]._meta (`retryAfterSeconds`, and `retryAfter` for the
 * date form); the gateway never sleeps or retries inside the call.
 */
describe('Retry-After on a failed tool call', () => {
  let service: TestToolService;
  let gateway: GatewayProcess;
  /** The date the 503 answer names, written as it was sent. */
  let sentDate = '';

  beforeAll(async () => {
    service = await TestToolService.start(
      manifest(
        'ra',
        ['ra.limited', 'ra.down', 'ra.malformed', 'ra.ok'].map((name) => tool({ name })),
      ),
    );
    service.tools.set('ra.limited', () => ({
      status: 429,
      headers: { 'content-type': 'application/json', 'retry-after': '7' },
      body: '{"error": "rate limited"}',
    }));
    service.tools.set('ra.down', () => {
      // whole seconds, so the date the gateway writes back is the same text
      sentDate = new Date(Math.floor(Date.now() / 1000) * 1000 + 120_000).toUTCString();
      return { status: 503, headers: { 'content-type': 'text/plain', 'retry-after': sentDate } };
    });
    service.tools.set('ra.malformed', () => ({
      status: 503,
      headers: { 'content-type': 'text/plain', 'retry-after': 'soon' },
      body: 'maintenance',
    }));
    service.tools.set('ra.ok', () => ({
      headers: { 'content-type': 'text/plain', 'retry-after': '7' },
      body: 'fine',
    }));
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('ra', service, 'ra.')]),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await service?.stop();
  });

  it('429 with retry-after 7 puts "retry after 7 s" in the text and retryAfterSeconds 7 in _meta (official v1 client)', async () => {
    const client = await connectV1(gateway.mcpUrl);
    try {
      const result = await client.callTool({ name: 'ra.limited', arguments: {} });
      expect(result.isError).toBe(true);
      expect(result.content).toEqual([
        {
          type: 'text',
          text: 'Tool ra.limited failed: the Tool Service answered HTTP 429 (a client error; retry after 7 s): {"error":"rate limited"}',
          _meta: { searchTime: expect.any(Number), retryAfterSeconds: 7 },
        },
      ]);
    } finally {
      await client.close();
    }
    expect(service.toolRequests('ra.limited')).toHaveLength(1); // reported, not retried
  });

  it('503 with an HTTP date gives the date and the seconds until it', async () => {
    const response = await callTool(gateway.mcpUrl, 'ra.down');
    const content = response.result.content[0];
    expect(response.result.isError).toBe(true);
    expect(content._meta.retryAfter).toBe(sentDate);
    // the seconds are counted on the gateway's clock from the date sent, 120 s after "now"
    expect(content._meta.retryAfterSeconds).toBeGreaterThan(100);
    expect(content._meta.retryAfterSeconds).toBeLessThanOrEqual(120);
    expect(content.text).toBe(
      `Tool ra.down failed: the Tool Service answered HTTP 503 (a server error; retry after ${sentDate} (in ${content._meta.retryAfterSeconds} s))`,
    );
    expect(service.toolRequests('ra.down')).toHaveLength(1);
  });

  it('ignores a malformed Retry-After: the result is as without one', async () => {
    const response = await callTool(gateway.mcpUrl, 'ra.malformed');
    const content = response.result.content[0];
    expect(content.text).toBe(
      'Tool ra.malformed failed: the Tool Service answered HTTP 503 (a server error): maintenance',
    );
    expect(Object.keys(content._meta)).toEqual(['searchTime']);
  });

  it('ignores a Retry-After on a successful answer', async () => {
    const response = await callTool(gateway.mcpUrl, 'ra.ok');
    expect(response.result).toEqual({
      content: [{ type: 'text', text: 'fine', _meta: { searchTime: expect.any(Number) } }],
    });
  });
});
