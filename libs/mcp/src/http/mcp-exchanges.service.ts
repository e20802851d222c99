import type { IncomingMessage, ServerResponse } from 'node:http';
import { JsonRpcCode } from '@app/wire';
import type { Socket } from 'node:net';
import { Injectable, Logger } from '@nestjs/common';
import { CallCancellation } from '@app/execution';
import { ResourceServer, type AuthOutcome } from '@app/identity';
import { RegistryService } from '@app/registry';
import { metadataAnswer } from './auth-answers';
import { NotificationHub } from '../listen/notification-hub.service';
import { SessionStreams } from '../listen/session-streams.service';
import { SessionEnding } from './session-ending.service';
import { McpTransport } from './mcp-transport.service';
import { VirtualServers } from '../servers/virtual-servers.service';
import { errorEnvelope } from '../answers/http-answer';
import { notFound, shuttingDown } from './listener-limits';
import { HttpAccessPolicy } from './http-access.policy';
import { plainError, write, writeStream } from './http-write';
import { RepeatedHeaders } from './repeated-headers';

/** After the grace period, how long the "shutting down" answers of abandoned calls may take to write, in ms. */
const ABANDON_WRITE_MS = 1_000;

/** A request on `/mcp` itself: no virtual server. */
const ON_MCP: { readonly server?: string } = Object.freeze({});

/**
 * What happens to a request on /mcp, whichever listener received it (McpHttpServer on
 * node:http, or McpController on fastify): `admit` before the body is read (Origin and Host,
 * CORS and preflight, method, repeated identity headers), `serve` once it is read (the call's
 * cancellation, the transport, the answer written with gzip when accepted), and
 * `abandonInFlight` when the shutdown grace period is over. Both listeners hand it the raw
 * node:http request and response, so they cannot drift apart.
 */
@Injectable()
export class McpExchanges {
  private readonly logger = new Logger('Mcp');
  /**
   * Calls whose answer is not written yet, aborted when the grace period ends. It holds their
   * cancellations only, never a request or response: a long-lived collection that referenced
   * them would carry every request's objects into the old generation (measured: +40 MB RSS
   * under load with 10,000 tools).
   */
  private readonly inFlight = new Set<CallCancellation>();
  private readonly connectionIds = new WeakMap<Socket, number>();
  private nextConnectionId = 1;
  /**
   * The auth outcome of an admitted POST, decided before its body was read (authenticateFirst),
   * for serve: a token is checked once per request (an introspection answer may not be
   * remembered), and the request is gone from here with its objects.
   */
  private readonly decided = new WeakMap<IncomingMessage, AuthOutcome>();
  /** The caller headers refused when repeated: the fixed ones and every source's forwarded ones. */
  private readonly repeatedHeaders: RepeatedHeaders;

  constructor(
    private readonly transport: McpTransport,
    private readonly access: HttpAccessPolicy,
    private readonly resourceServer: ResourceServer,
    private readonly sessionStreams: SessionStreams,
    private readonly hub: NotificationHub,
    private readonly servers: VirtualServers,
    registry: RegistryService,
    private readonly ending: SessionEnding,
  ) {
    this.repeatedHeaders = new RepeatedHeaders(() => registry.forwardedHeaders());
  }

  /**
   * Answers a request for the protected-resource metadata (RFC 9728;
   * docs/operations.md §13 "Metadata") and returns true, or returns false when `path` is not one of
   * its paths (or auth is off): GET and HEAD get the document, OPTIONS a CORS preflight, anything
   * else 405.
   */
  protectedResourceMetadata(req: IncomingMessage, res: ServerResponse, path: string): boolean {
    // the gateway's document, or a virtual server's on its own well-known path
    const json = this.resourceServer.metadataDocument(path);
    if (json === undefined) return false;
    if (req.method === 'GET' || req.method === 'HEAD') {
      write(res, metadataAnswer(json), req);
    } else if (req.method === 'OPTIONS') {
      write(res, {
        status: 204,
        headers: {
          'access-control-allow-origin': '*',
          'access-control-allow-methods': 'GET, OPTIONS',
          'access-control-max-age': '600',
        },
      });
    } else {
      write(res, plainError(405, 'Method Not Allowed: use GET', { allow: 'GET' }));
    }
    req.resume();
    return true;
  }

  /**
   * What both /mcp listeners (McpHttpServer on node:http, McpController on fastify) do with a
   * request before its body is read, so they cannot drift apart: 503 once the listener drains,
   * the protected-resource metadata or 404 outside `/mcp` (the raw request target's path,
   * exactly: `/%6dcp` or an absolute-form target is not it), then `admit`. True when the
   * request is a POST to /mcp whose body the listener is to read; otherwise it was answered.
   */
  front(req: IncomingMessage, res: ServerResponse, draining: boolean): boolean {
    if (draining) {
      write(res, shuttingDown());
      return false;
    }
    const path = (req.url ?? '').split('?', 1)[0] ?? '';
    // `/mcp`, or a virtual server's `/mcp/servers/{id}` (docs/operations.md §16)
    if (path !== '/mcp' && this.servers.serverOfPath(path) === undefined) {
      if (!this.protectedResourceMetadata(req, res, path)) {
        write(res, notFound(path));
        req.resume();
      }
      return false;
    }
    return this.admit(req, res);
  }

  /**
   * Checks a request to /mcp before its body is read. Answers it (and returns false) when it
   * is refused or needs no body: 400/-32600 for a repeated caller header (one a source
   * forwards), Authorization or Host (docs/operations.md §2 "Request limits on /mcp"), 403 for an Origin or Host not allowed
   * (docs/operations.md §8), 204 for an allowed preflight, GET and DELETE authenticated as a POST
   * is and then answered (a session's stream, the end of a session), 405 for any other method
   * but POST. An allowed
   * Origin's CORS headers are set on the response, so whatever is answered later carries them.
   */
  admit(req: IncomingMessage, res: ServerResponse): boolean {
    const repeated = this.repeatedHeaders.repeatedIn(req.rawHeaders);
    if (repeated !== undefined) {
      // Two values of a forwarded header must not reach a source joined into one.
      return this.answered(req, res, {
        status: 400,
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: errorEnvelope(
          null,
          JsonRpcCode.InvalidRequest,
          `Invalid Request: the ${repeated} header appears more than once; send it once`,
        ),
      });
    }
    const access = this.access.admit(req.headers);
    if (access.kind === 'refuse') return this.answered(req, res, access.answer);
    if (access.cors !== undefined) {
      for (const [name, value] of Object.entries(access.cors)) res.setHeader(name, value);
      if (req.method === 'OPTIONS')
        return this.answered(req, res, this.access.preflight(access.cors));
    }
    if (req.method === 'GET' || req.method === 'DELETE') {
      // authenticated as a POST is; GET is a 2025 session's notification stream (docs/operations.md §11),
      // DELETE ends a 2025 session (§9 "Ending a session")
      this.serveGetOrDelete(req, res);
      req.resume();
      return false;
    }
    if (req.method !== 'POST')
      return this.answered(
        req,
        res,
        plainError(405, 'Method Not Allowed: use POST', { allow: 'POST' }),
      );
    return true;
  }

  /**
   * Checks the token of an admitted POST before its body is read (docs/security.md "Every
   * request authenticated"; operations §13): a request its headers alone refuse — no token, a
   * malformed or refused one, the admin credential, a token for another path — is answered now
   * and its body discarded as it arrives, so a caller without a valid token never has the gateway
   * hold its body (up to 4 MiB each); `read` is called for one that may be served, and serve
   * takes its outcome. Without `mcp.auth` (and no static admin token) `read` is called at once.
   * @param refused called just before a refused request is answered here (fastify hands the
   *   response over then)
   */
  authenticateFirst(
    req: IncomingMessage,
    res: ServerResponse,
    read: () => void,
    refused: () => void = () => undefined,
  ): void {
    if (!this.resourceServer.checksRequests) {
      read();
      return;
    }
    const decide = (outcome: AuthOutcome): void => {
      if (res.destroyed) return;
      const path = this.serverOf(req);
      if (path !== undefined && this.transport.refusalFor(req.headers, outcome, path.server)) {
        // answered (and traced) as before, from the headers, with nothing of the body
        this.decided.set(req, outcome);
        refused();
        this.serve(req, res, '');
        req.resume();
        return;
      }
      this.decided.set(req, outcome);
      read();
    };
    const authorization = req.headers.authorization;
    // a token verified before is decided at once (the common case)
    const remembered = this.resourceServer.authenticateRemembered(authorization);
    if (remembered !== undefined) decide(remembered);
    else void this.resourceServer.authenticate(authorization).then(decide);
  }

  /**
   * The virtual server whose path an admitted request came on (docs/operations.md §16): none on
   * `/mcp` (no lookup, no allocation), undefined for a path whose server is gone.
   */
  private serverOf(req: IncomingMessage): { readonly server?: string } | undefined {
    const url = req.url ?? '';
    if (url === '/mcp') return ON_MCP;
    const server = this.servers.serverOfPath(url.split('?', 1)[0] ?? '');
    // a registered server deleted since the request was admitted: its path is gone, and the
    // request is never served as one to /mcp
    return server === undefined ? undefined : server === null ? ON_MCP : { server };
  }

  /** The 404 of a request whose virtual server was deleted while its body was read. */
  private gone(req: IncomingMessage, res: ServerResponse): void {
    write(res, notFound((req.url ?? '').split('?', 1)[0]));
  }

  /**
   * Runs an admitted POST whose body has been read, and writes its answer. The call is
   * aborted when the client's connection closes first
   * (docs/operations.md §2 "Calls nobody waits for"), by a matching notifications/cancelled, or at
   * the end of the shutdown grace period. Never throws.
   * @param body the body as strict UTF-8, "" when empty, null when not UTF-8
   */
  serve(req: IncomingMessage, res: ServerResponse, body: string | null): void {
    const path = this.serverOf(req);
    if (path === undefined) return this.gone(req, res);
    const server = path.server;
    const controller = new CallCancellation();
    // closed before the answer was written: the client went away
    const onClose = (): void => controller.abort('client-closed');
    this.inFlight.add(controller);
    res.once('close', onClose);
    // decided before the body was read (authenticateFirst); no lookup when nothing is checked
    const decided = this.resourceServer.checksRequests ? this.decided.get(req) : undefined;
    this.transport
      .post(
        {
          headers: req.headers,
          body,
          call: { controller, connectionId: this.connectionIdOf(req.socket) },
          ...(server === undefined ? {} : { server }),
        },
        decided,
      )
      .then(async (answer) => {
        if (answer.stream !== undefined) {
          // An SSE answer is still running: the client closing it cancels the call.
          await writeStream(res, answer, answer.stream);
        }
        // Forget the request as soon as its answer is handed to the socket, not at 'close': a
        // keep-alive response that is closed late must not keep every request it served.
        this.inFlight.delete(controller);
        res.off('close', onClose);
        if (answer.stream === undefined) write(res, answer, req);
      })
      .catch((err: unknown) => {
        this.inFlight.delete(controller);
        res.off('close', onClose);
        this.logger.error(
          `Unhandled error on /mcp: ${err instanceof Error ? (err.stack ?? err.name) : typeof err}`,
        );
        if (!res.headersSent) write(res, plainError(500, 'Internal error'));
      });
  }

  /**
   * Writes the answer to a GET (a session's notification stream, ended when the client closes
   * it, by `endStreams`, by its session's end, or by the hub's rules; or its refusal) or to a
   * DELETE (its session ended: SessionEnding), once the request is authenticated. Never throws.
   */
  private serveGetOrDelete(req: IncomingMessage, res: ServerResponse): void {
    // a virtual server's path takes a token for it, and streams its view (docs/operations.md §16)
    const path = this.serverOf(req);
    if (path === undefined) return this.gone(req, res);
    const server = path.server;
    const controller = new CallCancellation();
    // wired before the token is checked: a client gone meanwhile gets no stream
    res.once('close', () => controller.abort('client-closed'));
    this.transport
      .authenticated(
        req.headers,
        (caller) =>
          req.method === 'GET'
            ? this.sessionStreams.open(req.headers, controller, caller, server)
            : this.ending.end(req.headers, caller),
        server,
      )
      .then((answer) => {
        if (res.destroyed) return;
        if (answer.stream === undefined) write(res, answer);
        else void writeStream(res, answer, answer.stream);
      })
      .catch((err: unknown) => {
        this.logger.error(
          `Unhandled error on /mcp: ${err instanceof Error ? (err.stack ?? err.name) : typeof err}`,
        );
        if (!res.headersSent) write(res, plainError(500, 'Internal error'));
      });
  }

  /**
   * The listener starts draining: every notification stream (2026 listen, 2025 GET) ends now,
   * a listen with its closing result, so they do not hold the drain for the grace period.
   */
  endStreams(): void {
    this.hub.closeAll();
  }

  /**
   * The grace period is over: every call still running is answered with an isError result
   * saying the gateway is shutting down (docs/operations.md §2 "Calls nobody waits for"), instead
   * of a TCP reset that clients and metrics would read as an unreachable Tool Service. Waits at
   * most ABANDON_WRITE_MS for those answers to be written.
   */
  async abandonInFlight(): Promise<void> {
    if (this.inFlight.size === 0) return;
    for (const controller of this.inFlight) controller.abort('shutdown');
    // each is removed once its "shutting down" answer is handed to its socket
    const deadline = performance.now() + ABANDON_WRITE_MS;
    while (this.inFlight.size > 0 && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  private answered(
    req: IncomingMessage,
    res: ServerResponse,
    answer: Parameters<typeof write>[1],
  ): false {
    write(res, answer);
    req.resume();
    return false;
  }

  /** A number per client connection, for notifications/cancelled without a session. */
  private connectionIdOf(socket: Socket): number {
    let id = this.connectionIds.get(socket);
    if (id === undefined) {
      id = this.nextConnectionId++;
      this.connectionIds.set(socket, id);
    }
    return id;
  }
}
