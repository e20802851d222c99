/**
 * A minimal MCP client over Streamable HTTP for the console's "Run" (docs/console.md "Tools": the
 * call goes through /mcp like any agent's): `initialize` (2025-11-25), `notifications/initialized`,
 * then `tools/call` with the session id. Answers may come as JSON or as an SSE stream.
 */

const PROTOCOL_VERSION = '2025-11-25';

export interface ToolCallResult {
  readonly content?: readonly {
    readonly type: string;
    readonly text?: string;
    readonly _meta?: Record<string, unknown>;
  }[];
  readonly structuredContent?: unknown;
  readonly isError?: boolean;
  readonly _meta?: Record<string, unknown>;
}

/** A JSON-RPC error answer, or an HTTP/transport failure in the console's words. */
export class McpCallError extends Error {
  constructor(
    message: string,
    readonly code?: number,
    readonly httpStatus?: number,
  ) {
    super(message);
  }
}

interface RpcAnswer {
  readonly id?: unknown;
  readonly result?: unknown;
  readonly error?: { readonly code: number; readonly message: string };
}

/** The JSON-RPC messages of an SSE body (`data:` lines of each event). */
function sseMessages(text: string): unknown[] {
  const out: unknown[] = [];
  for (const event of text.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).replace(/^ /, ''))
      .join('\n');
    if (data === '') continue;
    try {
      out.push(JSON.parse(data));
    } catch {
      // a keep-alive or a partial event: not a message
    }
  }
  return out;
}

export class McpClient {
  private session?: { id: string | null; version: string };
  private nextId = 1;

  /** @param token the caller token of "Run" (tokens.ts); never the admin token */
  constructor(
    readonly url: string,
    private readonly token: () => string,
    private readonly clientVersion: string,
  ) {}

  /** Calls a tool; throws McpCallError for a JSON-RPC error or a failed exchange. */
  async callTool(name: string, args: Record<string, unknown>): Promise<ToolCallResult> {
    const params = { name, arguments: args };
    try {
      return (await this.request('tools/call', params)) as ToolCallResult;
    } catch (err) {
      // An expired or foreign session (404 by the spec): open a new one once.
      if (!(err instanceof McpCallError) || err.httpStatus !== 404) throw err;
      this.session = undefined;
      return (await this.request('tools/call', params)) as ToolCallResult;
    }
  }

  private async request(method: string, params: unknown): Promise<unknown> {
    if (this.session === undefined) await this.initialize();
    return (await this.exchange(method, params)).result;
  }

  private async initialize(): Promise<void> {
    const { result, sessionId } = await this.exchange('initialize', {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: 'mcp-gateway-console', version: this.clientVersion },
    });
    const version =
      typeof result === 'object' &&
      result !== null &&
      'protocolVersion' in result &&
      typeof result.protocolVersion === 'string'
        ? result.protocolVersion
        : PROTOCOL_VERSION;
    this.session = { id: sessionId, version };
    await this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  }

  private headers(): Record<string, string> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
    const token = this.token();
    if (token !== '') headers.authorization = `Bearer ${token}`;
    if (this.session !== undefined) {
      headers['mcp-protocol-version'] = this.session.version;
      if (this.session.id !== null) headers['mcp-session-id'] = this.session.id;
    }
    return headers;
  }

  private async send(message: unknown): Promise<Response> {
    let res: Response;
    try {
      res = await fetch(this.url, {
        method: 'POST',
        headers: this.headers(),
        body: JSON.stringify(message),
      });
    } catch {
      throw new McpCallError(
        `Could not reach ${this.url}. Is the gateway's /mcp reachable from this browser, and is ` +
          `this page's origin (${location.origin}) listed in mcp.http.allowedOrigins?`,
      );
    }
    if (res.status === 401 || res.status === 403) {
      const text = await res.text();
      throw new McpCallError(
        `/mcp refused the call (HTTP ${res.status}${res.status === 401 ? ': a valid caller token is required; enter one under "Caller token for Run" (the admin token is never sent to /mcp)' : ''}). ${text.slice(0, 300)}`,
        undefined,
        res.status,
      );
    }
    return res;
  }

  private async exchange(
    method: string,
    params: unknown,
  ): Promise<{ result: unknown; sessionId: string | null }> {
    const id = this.nextId++;
    const res = await this.send({ jsonrpc: '2.0', id, method, params });
    const text = await res.text();
    const type = res.headers.get('content-type') ?? '';
    const messages: unknown[] = type.includes('text/event-stream')
      ? sseMessages(text)
      : (() => {
          try {
            return [JSON.parse(text) as unknown];
          } catch {
            return [];
          }
        })();
    const answer = messages.find(
      (m): m is RpcAnswer => typeof m === 'object' && m !== null && (m as RpcAnswer).id === id,
    );
    if (answer?.error !== undefined)
      throw new McpCallError(
        `${answer.error.message} (JSON-RPC ${answer.error.code})`,
        answer.error.code,
        res.status,
      );
    if (!res.ok || answer === undefined)
      throw new McpCallError(
        `/mcp answered HTTP ${res.status} without a result: ${text.slice(0, 300)}`,
        undefined,
        res.status,
      );
    return { result: answer.result, sessionId: res.headers.get('mcp-session-id') };
  }
}
