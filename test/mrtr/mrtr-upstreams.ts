import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { McpServer as V1McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import {
  McpServer as V2McpServer,
  acceptedContent,
  createMcpHandler,
  inputRequired,
} from '@modelcontextprotocol/server';
import { z } from 'zod';

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** node:http on 127.0.0.1 (ephemeral port) that records every JSON-RPC body it gets. */
abstract class Upstream {
  /** JSON-RPC bodies of POSTs, in order. */
  readonly bodies: any[] = [];
  /** The Authorization header of each POST body in `bodies`, at the same index. */
  readonly authorizations: (string | undefined)[] = [];
  /** The traceparent header of each POST body in `bodies`, at the same index. */
  readonly traceparents: (string | undefined)[] = [];
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private boundPort = 0;

  get url(): string {
    return `http://127.0.0.1:${this.boundPort}/mcp`;
  }

  /** The bodies of `method` (default tools/call) the upstream received. */
  calls(method = 'tools/call'): any[] {
    return this.bodies.filter((b) => b?.method === method);
  }

  protected abstract handle(req: IncomingMessage, res: ServerResponse, raw?: Buffer): Promise<void>;

  protected async listen(): Promise<void> {
    const server = createServer((req, res) => {
      void (async () => {
        const raw = req.method === 'POST' ? await readBody(req) : undefined;
        if (raw !== undefined && raw.length > 0) {
          try {
            this.bodies.push(JSON.parse(raw.toString('utf8')));
            this.authorizations.push(req.headers.authorization);
            const traceparent = req.headers.traceparent;
            this.traceparents.push(typeof traceparent === 'string' ? traceparent : undefined);
          } catch {
            // not JSON: the SDK answers it
          }
        }
        await this.handle(req, res, raw);
      })().catch(() => {
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    });
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    this.boundPort = (server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const socket of this.sockets) socket.destroy();
    });
  }
}

/**
 * A 2026-07-28 upstream built with the v2 server SDK (`createMcpHandler`, legacy: 'reject')
 * whose tools ask for input the 2026 way, with `inputRequired(...)` results (wire notes §4):
 * - `confirm_deploy {env}`: elicits `{confirm: boolean}`, requestState `opaque-state-<env>`;
 *   answers `deployed to <env> (state=<the requestState it got back>)`, or `cancelled`;
 * - `write_poem {topic}`: asks `sampling/createMessage`, then a second round elicits
 *   `{publish: boolean}` (two rounds), answers with the sampled text and the choice;
 * - prompt `release_notes {version}` and resource `vault://secret`: elicit `{confirm}` like
 *   confirm_deploy (requestState `prompt-state-<version>`, `resource-state`), then answer
 *   with the choice and the requestState they got back.
 */
export class V2MrtrUpstream extends Upstream {
  private readonly handler = createMcpHandler(() => V2MrtrUpstream.buildServer(), {
    legacy: 'reject',
  });

  static async start(): Promise<V2MrtrUpstream> {
    const upstream = new V2MrtrUpstream();
    await upstream.listen();
    return upstream;
  }

  override async stop(): Promise<void> {
    await this.handler.close();
    await super.stop();
  }

  protected async handle(req: IncomingMessage, res: ServerResponse, raw?: Buffer): Promise<void> {
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers))
      if (typeof value === 'string') headers.set(name, value);
    const aborted = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) aborted.abort();
    });
    const response = await this.handler.fetch(
      new Request(`${this.url.replace(/\/mcp$/, '')}${req.url ?? '/'}`, {
        method: req.method,
        headers,
        body: raw === undefined ? undefined : new Uint8Array(raw),
        signal: aborted.signal,
      }),
    );
    const out: Record<string, string> = {};
    response.headers.forEach((value, name) => (out[name] = value));
    res.writeHead(response.status, out);
    if (response.body !== null)
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>)
        res.write(chunk);
    res.end();
  }

  private static buildServer(): V2McpServer {
    const server = new V2McpServer({ name: 'mrtr-upstream-v2', version: '2.0.0' });
    const confirm = z.object({ confirm: z.boolean() });
    server.registerTool(
      'confirm_deploy',
      { description: 'Deploys after a confirmation', inputSchema: z.object({ env: z.string() }) },
      ({ env }, ctx) => {
        const answer = acceptedContent(ctx.mcpReq.inputResponses, 'confirm', confirm);
        if (answer === undefined)
          return inputRequired({
            inputRequests: {
              confirm: inputRequired.elicit({
                message: `Deploy to ${env}?`,
                requestedSchema: confirm,
              }),
            },
            requestState: `opaque-state-${env}`,
          });
        const text = answer.confirm
          ? `deployed to ${env} (state=${String(ctx.mcpReq.requestState())})`
          : 'cancelled';
        return { content: [{ type: 'text', text }] };
      },
    );
    // progress 1 of 2 in every round, 2 of 2 with the result: each round counts from its start
    server.registerTool(
      'progress_deploy',
      {
        description: 'Deploys after a confirmation, reporting progress',
        inputSchema: z.object({ env: z.string() }),
      },
      async ({ env }, ctx) => {
        const token = ctx.mcpReq._meta?.progressToken;
        const progress = (value: number): Promise<void> =>
          token === undefined
            ? Promise.resolve()
            : ctx.mcpReq.notify({
                method: 'notifications/progress',
                params: { progressToken: token, progress: value, total: 2 },
              });
        await progress(1);
        const answer = acceptedContent(ctx.mcpReq.inputResponses, 'confirm', confirm);
        if (answer === undefined)
          return inputRequired({
            inputRequests: {
              confirm: inputRequired.elicit({
                message: `Deploy to ${env}?`,
                requestedSchema: confirm,
              }),
            },
            requestState: `progress-state-${env}`,
          });
        await progress(2);
        return { content: [{ type: 'text', text: `progress deployed to ${env}` }] };
      },
    );
    const publish = z.object({ publish: z.boolean() });
    server.registerTool(
      'write_poem',
      {
        description: 'Samples a poem, then asks whether to publish it',
        inputSchema: z.object({ topic: z.string() }),
      },
      ({ topic }, ctx) => {
        const responses = ctx.mcpReq.inputResponses as Record<string, any> | undefined;
        const state = ctx.mcpReq.requestState();
        const sampled = responses?.poem?.content?.text;
        if (typeof state !== 'string' && typeof sampled !== 'string')
          return inputRequired({
            inputRequests: {
              poem: inputRequired.createMessage({
                messages: [
                  { role: 'user', content: { type: 'text', text: `A poem about ${topic}` } },
                ],
                maxTokens: 50,
              }),
            },
          });
        if (typeof state !== 'string')
          return inputRequired({
            inputRequests: {
              publish: inputRequired.elicit({ message: 'Publish it?', requestedSchema: publish }),
            },
            requestState: `poem:${Buffer.from(String(sampled)).toString('base64url')}`,
          });
        const choice = acceptedContent(ctx.mcpReq.inputResponses, 'publish', publish);
        const poem = Buffer.from(state.slice('poem:'.length), 'base64url').toString('utf8');
        return {
          content: [{ type: 'text', text: `${poem} | published=${String(choice?.publish)}` }],
        };
      },
    );
    server.registerPrompt(
      'release_notes',
      {
        description: 'Release notes, after a confirmation',
        argsSchema: z.object({ version: z.string() }),
      },
      ({ version }, ctx) => {
        const answer = acceptedContent(ctx.mcpReq.inputResponses, 'confirm', confirm);
        if (answer === undefined)
          return inputRequired({
            inputRequests: {
              confirm: inputRequired.elicit({
                message: `Notes for ${version}?`,
                requestedSchema: confirm,
              }),
            },
            requestState: `prompt-state-${version}`,
          });
        const text = `notes ${version} confirm=${String(answer.confirm)} (state=${String(ctx.mcpReq.requestState())})`;
        return { messages: [{ role: 'user', content: { type: 'text', text } }] };
      },
    );
    server.registerResource(
      'vault',
      'vault://secret',
      { description: 'A secret, after a confirmation', mimeType: 'text/plain' },
      (uri, ctx) => {
        const answer = acceptedContent(ctx.mcpReq.inputResponses, 'confirm', confirm);
        if (answer === undefined)
          return inputRequired({
            inputRequests: {
              confirm: inputRequired.elicit({
                message: 'Reveal the secret?',
                requestedSchema: confirm,
              }),
            },
            requestState: 'resource-state',
          });
        const text = `secret confirm=${String(answer.confirm)} (state=${String(ctx.mcpReq.requestState())})`;
        return { contents: [{ uri: uri.href, mimeType: 'text/plain', text }] };
      },
    );
    return server;
  }
}

/**
 * A 2025-11-25 upstream built with the v1 server SDK (stateful sessions) whose tools ask the
 * client mid-call, on the call's SSE answer (relatedRequestId):
 * - `approve {question}`: `elicitInput` form `{approve: boolean}`, answers `approve=<json>`;
 * - `summarize {text}`: `createMessage`, answers `summary=<sampled text>`;
 * - `double_check {question}`: two elicitations one after the other, answers both;
 * - prompt `interview {topic}` and resource `notes://private`: one elicitation each, then
 *   a prompt message / text content with the answer.
 */
export class V1AskingUpstream extends Upstream {
  private readonly sessions = new Map<string, StreamableHTTPServerTransport>();

  static async start(): Promise<V1AskingUpstream> {
    const upstream = new V1AskingUpstream();
    await upstream.listen();
    return upstream;
  }

  protected async handle(req: IncomingMessage, res: ServerResponse, raw?: Buffer): Promise<void> {
    let body: unknown;
    try {
      body = raw === undefined || raw.length === 0 ? undefined : JSON.parse(raw.toString('utf8'));
    } catch {
      body = undefined;
    }
    const sid = req.headers['mcp-session-id'];
    if (typeof sid === 'string') {
      const transport = this.sessions.get(sid);
      if (transport === undefined) {
        res.writeHead(404).end();
        return;
      }
      await transport.handleRequest(req, res, body);
      return;
    }
    if (req.method === 'POST' && isInitializeRequest(body)) {
      const server = this.buildServer();
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          this.sessions.set(id, transport);
        },
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
      return;
    }
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(
      '{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}',
    );
  }

  private buildServer(): V1McpServer {
    const server = new V1McpServer(
      { name: 'asking-upstream-v1', version: '1.0.0' },
      { capabilities: { logging: {} } },
    );
    const approveSchema = {
      type: 'object' as const,
      properties: { approve: { type: 'boolean' as const } },
      required: ['approve'],
    };
    server.registerTool(
      'approve',
      { description: 'Asks the user', inputSchema: { question: z.string() } },
      async ({ question }, extra) => {
        const answer = await server.server.elicitInput(
          { mode: 'form', message: question, requestedSchema: approveSchema },
          { relatedRequestId: extra.requestId },
        );
        return { content: [{ type: 'text', text: `approve=${JSON.stringify(answer)}` }] };
      },
    );
    server.registerTool(
      'progress_approve',
      {
        description: 'Reports progress 1 of 2, asks the user, reports 2 of 2 and logs',
        inputSchema: { question: z.string() },
      },
      async ({ question }, extra) => {
        const token = extra._meta?.progressToken;
        const progress = (value: number): Promise<void> =>
          token === undefined
            ? Promise.resolve()
            : extra.sendNotification({
                method: 'notifications/progress',
                params: { progressToken: token, progress: value, total: 2 },
              });
        await progress(1);
        const answer = await server.server.elicitInput(
          { mode: 'form', message: question, requestedSchema: approveSchema },
          { relatedRequestId: extra.requestId },
        );
        await progress(2);
        await extra.sendNotification({
          method: 'notifications/message',
          params: { level: 'warning', data: 'answered' },
        });
        return { content: [{ type: 'text', text: `progress approve=${answer.action}` }] };
      },
    );
    server.registerTool(
      'slow_approve',
      { description: 'Asks the user, then works 4 s', inputSchema: { question: z.string() } },
      async ({ question }, extra) => {
        const answer = await server.server.elicitInput(
          { mode: 'form', message: question, requestedSchema: approveSchema },
          { relatedRequestId: extra.requestId },
        );
        await new Promise((resolve) => setTimeout(resolve, 4000));
        return { content: [{ type: 'text', text: `slow approve=${JSON.stringify(answer)}` }] };
      },
    );
    server.registerTool(
      'summarize',
      { description: 'Asks the model', inputSchema: { text: z.string() } },
      async ({ text }, extra) => {
        const answer = await server.server.createMessage(
          { messages: [{ role: 'user', content: { type: 'text', text } }], maxTokens: 20 },
          { relatedRequestId: extra.requestId },
        );
        const content = answer.content as { type: string; text?: string };
        return { content: [{ type: 'text', text: `summary=${content.text ?? ''}` }] };
      },
    );
    server.registerTool(
      'double_check',
      { description: 'Asks the user twice', inputSchema: { question: z.string() } },
      async ({ question }, extra) => {
        const first = await server.server.elicitInput(
          { mode: 'form', message: question, requestedSchema: approveSchema },
          { relatedRequestId: extra.requestId },
        );
        const second = await server.server.elicitInput(
          { mode: 'form', message: `Really? ${question}`, requestedSchema: approveSchema },
          { relatedRequestId: extra.requestId },
        );
        return {
          content: [
            {
              type: 'text',
              text: `first=${JSON.stringify(first.content)} second=${JSON.stringify(second.content)}`,
            },
          ],
        };
      },
    );
    server.registerPrompt(
      'interview',
      { description: 'Asks the user, then prompts', argsSchema: { topic: z.string() } },
      async ({ topic }, extra) => {
        const answer = await server.server.elicitInput(
          { mode: 'form', message: `Interview about ${topic}?`, requestedSchema: approveSchema },
          { relatedRequestId: extra.requestId },
        );
        const text = `interview ${topic} approve=${JSON.stringify(answer.content)}`;
        return { messages: [{ role: 'user', content: { type: 'text', text } }] };
      },
    );
    server.registerResource(
      'diary',
      'notes://private',
      { description: 'Asks the user before it is read', mimeType: 'text/plain' },
      async (uri, extra) => {
        const answer = await server.server.elicitInput(
          { mode: 'form', message: 'Open the diary?', requestedSchema: approveSchema },
          { relatedRequestId: extra.requestId },
        );
        const text = `diary approve=${JSON.stringify(answer.content)}`;
        return { contents: [{ uri: uri.href, mimeType: 'text/plain', text }] };
      },
    );
    return server;
  }
}
