import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Injectable } from '@nestjs/common';
import { drainListener, trackConnections } from './drain-listener';
import { decodeBody } from './http-write';
import { answerClientError, MCP_SERVER_OPTIONS, refuseTooLarge } from './listener-limits';
import { McpExchanges } from './mcp-exchanges.service';
import { readMcpBody } from './read-body';

/**
 * The opt-in agents' listener (PORT, MCP_HTTP_SERVER=node): POST /mcp on plain node:http,
 * handing each request to McpTransport, with no framework router, hooks, pipes or
 * interceptors. The default is McpController on fastify; this one measured 5–15 % less CPU
 * per call (docs/benchmarks.md, "/mcp: McpController or node:http").
 */
@Injectable()
export class McpHttpServer {
  private server?: Server;
  private draining = false;

  constructor(private readonly exchanges: McpExchanges) {}

  /**
   * Starts listening; resolves with the bound port (PORT=0 picks a free one).
   * @param maxConnections most connections kept open at once (mcp.http.maxConnections)
   */
  async listen(port: number, host: string, maxConnections?: number): Promise<number> {
    const server = createServer(MCP_SERVER_OPTIONS, (req, res) => this.handle(req, res));
    server.on('clientError', answerClientError);
    // http.maxConnections (docs/operations.md §1): past this, node:http closes new connections as
    // they arrive
    if (maxConnections !== undefined) server.maxConnections = maxConnections;
    trackConnections(server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    return (server.address() as AddressInfo).port;
  }

  /**
   * Graceful stop: no new connections, 503 for requests that still arrive on open ones,
   * in-flight requests finish; after `graceMs` the remaining connections are cut.
   * Resolves with true when everything finished in time.
   */
  async drain(graceMs: number): Promise<boolean> {
    const server = this.server;
    if (server === undefined) return true;
    this.draining = true;
    this.exchanges.endStreams();
    return drainListener(server, graceMs, () => this.exchanges.abandonInFlight());
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    if (!this.exchanges.front(req, res, this.draining)) return;
    this.exchanges.authenticateFirst(req, res, () =>
      readMcpBody(req, (error, body) => {
        if (error === null && body !== undefined) {
          this.exchanges.serve(req, res, body.length === 0 ? '' : decodeBody([body], body.length));
        } else if (error?.statusCode === 413) {
          refuseTooLarge(req);
        } else {
          // the client closed the connection while its body was being read: nobody to answer
          res.destroy();
        }
      }),
    );
  }
}
