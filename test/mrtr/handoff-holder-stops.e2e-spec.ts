import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { GatewayProcess, TEST_SESSION_KEYS, waitFor } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { SHARED_REDIS_URL, uniqueKeyPrefix } from '../support/redis';
import { modernRequest } from '../support/modern-rpc';
import type { RawAnswer } from '../support/rpc';

const FORM_ELICITATION = { elicitation: { form: {} } };

/** A raw 2026-07-28 tools/call from a client that declares form elicitation. */
function modernCall(
  url: string,
  name: string,
  params: Record<string, unknown>,
  id = 1,
): Promise<RawAnswer> {
  return modernRequest(url, 'tools/call', { name, ...params }, FORM_ELICITATION, undefined, id);
}

/**
 * A 2025-11-25 upstream (v1 server SDK, stateful sessions) with one side-effecting tool:
 * `pay {n}` asks the client to confirm (elicitation), then waits until the test opens its gate,
 * then pays (counted in `payments`).
 */
class PayingUpstream {
  payments = 0;
  /** Confirmations the tool got from the client (it was past its elicitation). */
  confirmed = 0;
  private gate?: () => void;
  private gated = new Promise<void>((resolve) => (this.gate = resolve));
  private readonly sessions = new Map<string, StreamableHTTPServerTransport>();
  private server?: Server;
  private port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}/mcp`;
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => void this.handle(req, res).catch(() => res.end()));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  /** Lets the tool calls past their confirmation pay; the next ones wait again. */
  open(): void {
    this.gate?.();
    this.gated = new Promise<void>((resolve) => (this.gate = resolve));
  }

  async stop(): Promise<void> {
    this.gate?.();
    for (const transport of this.sessions.values()) await transport.close();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const body: unknown = raw.length > 0 ? JSON.parse(raw.toString('utf8')) : undefined;
    const sid = req.headers['mcp-session-id'];
    if (typeof sid === 'string') {
      const transport = this.sessions.get(sid);
      if (transport === undefined) return void res.writeHead(404).end();
      return transport.handleRequest(req, res, body);
    }
    if (req.method !== 'POST' || !isInitializeRequest(body)) return void res.writeHead(400).end();
    const server = new McpServer({ name: 'paying-upstream', version: '1.0.0' });
    server.registerTool('pay', { inputSchema: { n: z.number() } }, async ({ n }, extra) => {
      const answer = await server.server.elicitInput(
        {
          mode: 'form',
          message: `Pay ${n}?`,
          requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
        },
        { relatedRequestId: extra.requestId },
      );
      this.confirmed++;
      await this.gated;
      this.payments++;
      return { content: [{ type: 'text', text: `paid ${n} (${answer.action})` }] };
    });
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void this.sessions.set(id, transport),
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }
}

/**
 * A 2026 client's retry of a parked call (2025 upstream) lands on a replica that does not hold
 * the call; the holder takes its input and stops before it answers (a crash, a kill): the retry
 * is told so within seconds, as a -32603 saying the outcome is unknown, not held for the call's
 * whole time (callMillis + pendingInputMillis) and then told the call "is no longer pending",
 * which reads as "start it again" for a call whose side effect the upstream may have made
 * (docs/operations.md §11 "Multi round-trip and era bridging").
 */
describe('a parked call whose holder stops after it took the retry’s input', () => {
  let up: PayingUpstream;
  let holder: GatewayProcess;
  let other: GatewayProcess;

  beforeAll(async () => {
    up = new PayingUpstream();
    await up.start();
    const mcp = {
      ...gatewayConfig([], {
        // the whole-call bound the unfixed retry waited out: callMillis + pendingInputMillis + 5 s
        upstreams: [upstream('u', up.url, { timeouts: { callMillis: 60_000 } })],
        redis: { keyPrefix: uniqueKeyPrefix() },
      }),
      http: { modernEra: true },
    };
    const env = { MCP_SESSION_KEYS: TEST_SESSION_KEYS, REDIS_URL: SHARED_REDIS_URL };
    [holder, other] = await Promise.all([
      GatewayProcess.startPatiently({ mcp, env }),
      GatewayProcess.startPatiently({ mcp, env }),
    ]);
    await Promise.all([holder.waitForReady(90_000), other.waitForReady(90_000)]);
  }, 200_000);

  afterAll(async () => {
    await Promise.all([holder?.stop('SIGKILL'), other?.stop()]);
    await up?.stop();
  });

  it('a holder alive through a long round answers the retry with the result', async () => {
    const first = await modernCall(holder.mcpUrl, 'u__pay', { arguments: { n: 1 } });
    const [key] = Object.keys(first.json.result.inputRequests as object);
    const retry = modernCall(
      other.mcpUrl,
      'u__pay',
      {
        arguments: { n: 1 },
        inputResponses: { [key!]: { action: 'accept', content: { ok: true } } },
        requestState: first.json.result.requestState,
      },
      2,
    );
    await waitFor(() => up.confirmed === 1, 30_000);
    // longer than the holder's channel may go without a subscriber before the holder counts as
    // stopped: a round that takes long is no stopped holder
    await new Promise((resolve) => setTimeout(resolve, 8000));
    up.open();
    const answer = await retry;
    expect(answer.json.result).toMatchObject({ content: [{ text: 'paid 1 (accept)' }] });
    expect(up.payments).toBe(1);
  }, 90_000);

  it('a holder killed mid-round: the retry is -32603 saying the outcome is unknown, and the call is not run again', async () => {
    const first = await modernCall(holder.mcpUrl, 'u__pay', { arguments: { n: 2 } });
    const [key] = Object.keys(first.json.result.inputRequests as object);
    const params = {
      arguments: { n: 2 },
      inputResponses: { [key!]: { action: 'accept', content: { ok: true } } },
      requestState: first.json.result.requestState,
    };
    const retry = modernCall(other.mcpUrl, 'u__pay', params, 2);
    // the holder took the input: the upstream got the confirmation
    await waitFor(() => up.confirmed === 2, 30_000);
    await holder.stop('SIGKILL');
    const answer = await retry;
    expect(answer.json.error.code).toBe(-32603);
    expect(answer.json.error.message).toMatch(/stopped after it took/);
    expect(answer.json.error.message).toMatch(/outcome is unknown/);
    // the upstream goes on (it had the input): the gateway sends it nothing more
    up.open();
    await waitFor(() => up.payments === 2, 30_000);
    // the same retry again is refused as used: its input was taken
    const again = await modernCall(other.mcpUrl, 'u__pay', params, 3);
    expect(again.json.error).toMatchObject({ code: -32602 });
    expect(up.confirmed).toBe(2);
  }, 120_000);
});
