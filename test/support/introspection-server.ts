import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** How the server answers for now: a delay before answering, and the HTTP status. */
export interface IntrospectionBehaviour {
  /** ms before the answer is written (a slow authorization server). */
  delayMs: number;
  /** 200 answers from `answers`; anything else answers that status with an error body. */
  status: number;
}

/**
 * A small RFC 7662 introspection endpoint on 127.0.0.1 for the failure shapes oidc-provider
 * does not produce: an answer without `aud`, a slow server, a 500. It answers `answers.get(token)`
 * (else `{active: false}`) and counts what it was asked: every request, and the most that were
 * in flight at once.
 */
export class IntrospectionServer {
  readonly answers = new Map<string, Record<string, unknown>>();
  readonly behaviour: IntrospectionBehaviour = { delayMs: 0, status: 200 };
  /** Tokens asked about, in arrival order. */
  readonly asked: string[] = [];
  inFlight = 0;
  maxInFlight = 0;
  private readonly server: Server;

  private constructor() {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        this.inFlight += 1;
        this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
        const token = new URLSearchParams(body).get('token') ?? '';
        this.asked.push(token);
        const { delayMs, status } = this.behaviour;
        const answer = (): void => {
          this.inFlight -= 1;
          if (res.destroyed) return;
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify(
              status === 200
                ? (this.answers.get(token) ?? { active: false })
                : { error: 'server_error' },
            ),
          );
        };
        if (delayMs > 0) setTimeout(answer, delayMs);
        else answer();
      });
    });
  }

  static async start(): Promise<IntrospectionServer> {
    const server = new IntrospectionServer();
    await new Promise<void>((resolve) => server.server.listen(0, '127.0.0.1', resolve));
    return server;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/introspect`;
  }

  /** Forgets what was asked (counters back to zero). */
  reset(): void {
    this.asked.length = 0;
    this.maxInFlight = this.inFlight;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
