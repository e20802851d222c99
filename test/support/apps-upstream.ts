import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ElicitResultSchema, isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { listenLocal, readJson, stopper } from './local-http';

/** The MCP Apps extension (ext-apps `EXTENSION_ID`) and its view's MIME type (`RESOURCE_MIME_TYPE`). */
export const UI_EXTENSION = 'io.modelcontextprotocol/ui';
export const APP_MIME_TYPE = 'text/html;profile=mcp-app';
/** Another extension the upstream declares, with settings of its own. */
export const RECEIPTS_EXTENSION = 'com.example/receipts';

/**
 * A 2025-11-25 upstream (v1 SDK, stateful sessions) that follows the MCP Apps pattern the
 * ext-apps docs give (`getUiCapability` at `oninitialized`): a session whose client declared the
 * UI extension with the app MIME type gets `weather` with a view (`_meta.ui.resourceUri`) and the
 * view's own `weather_refresh` (`_meta.ui.visibility: ["app"]`: only the view calls it); any
 * other session a text-only `weather`. `confirm_link` asks the client a URL-mode elicitation.
 * It declares two extensions of its own (UI, and `com.example/receipts`).
 */
export class AppsUpstream {
  /** The client capabilities of each session, as its initialize declared them. */
  readonly sessionCapabilities: Record<string, unknown>[] = [];
  private readonly sessions = new Map<string, StreamableHTTPServerTransport>();

  private readonly server: Server = createServer((req, res) => {
    void this.handle(req, res).catch(() => res.destroy());
  });
  /** The MCP endpoint, once listening. */
  url = '';

  /**
   * @param viewUri its view's `ui://` resource: two of these behind one gateway need their own
   *   (a tool whose view another source serves is not published, docs/operations.md §10
   *   "Extensions")
   */
  private constructor(private readonly viewUri: string) {}

  static async start(viewUri = 'ui://weather/view.html'): Promise<AppsUpstream> {
    const upstream = new AppsUpstream(viewUri);
    upstream.url = await listenLocal(upstream.server);
    return upstream;
  }

  async stop(): Promise<void> {
    const transports = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(transports.map((t) => t.close()));
    await stopper(this.server)();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = req.method === 'POST' ? (await readJson(req)).body : undefined;
    const header = req.headers['mcp-session-id'];
    const sessionId = typeof header === 'string' ? header : undefined;
    if (sessionId !== undefined) {
      const transport = this.sessions.get(sessionId);
      if (transport === undefined) {
        res.writeHead(404).end();
        return;
      }
      await transport.handleRequest(req, res, body);
      return;
    }
    if (req.method !== 'POST' || !isInitializeRequest(body)) {
      res.writeHead(400).end();
      return;
    }
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        this.sessions.set(id, transport);
      },
    });
    await this.buildServer().connect(transport);
    await transport.handleRequest(req, res, body);
  }

  private buildServer(): McpServer {
    const mcp = new McpServer(
      { name: 'apps-upstream', version: '1.0.0' },
      {
        capabilities: {
          extensions: { [UI_EXTENSION]: {}, [RECEIPTS_EXTENSION]: { version: 2 } },
        },
      },
    );
    // the view (registered before the session starts: the SDK fixes its capabilities then)
    mcp.registerResource('weather_view', this.viewUri, { mimeType: APP_MIME_TYPE }, (uri) => ({
      contents: [{ uri: uri.href, mimeType: APP_MIME_TYPE, text: '<p>weather</p>' }],
    }));
    mcp.registerTool(
      'confirm_link',
      { description: 'Asks the user to open a link (URL-mode elicitation)' },
      async (extra) => {
        try {
          // on the call's own stream, as a client's answer is routed back to this call
          const answer = await extra.sendRequest(
            {
              method: 'elicitation/create',
              params: {
                mode: 'url',
                message: 'Open the link to confirm',
                url: 'https://example.com/confirm',
                elicitationId: randomUUID(),
              },
            },
            ElicitResultSchema,
          );
          return { content: [{ type: 'text', text: `answered: ${answer.action}` }] };
        } catch (err) {
          return {
            content: [
              { type: 'text', text: `not asked: ${err instanceof Error ? err.message : ''}` },
            ],
          };
        }
      },
    );
    mcp.server.oninitialized = () => {
      const declared = (mcp.server.getClientCapabilities() ?? {}) as Record<string, unknown>;
      this.sessionCapabilities.push(declared);
      const extensions = (declared.extensions ?? {}) as Record<string, { mimeTypes?: string[] }>;
      if (extensions[UI_EXTENSION]?.mimeTypes?.includes(APP_MIME_TYPE) === true) {
        mcp.registerTool(
          'weather',
          {
            description: 'Weather with an interactive view',
            _meta: { ui: { resourceUri: this.viewUri } },
          },
          () => ({ content: [{ type: 'text', text: 'sunny (with a view)' }] }),
        );
        mcp.registerTool(
          'weather_refresh',
          {
            description: "The view's refresh button",
            _meta: { ui: { resourceUri: this.viewUri, visibility: ['app'] } },
          },
          () => ({ content: [{ type: 'text', text: 'refreshed' }] }),
        );
      } else {
        mcp.registerTool('weather', { description: 'Weather as text' }, () => ({
          content: [{ type: 'text', text: 'sunny' }],
        }));
      }
    };
    return mcp;
  }
}
