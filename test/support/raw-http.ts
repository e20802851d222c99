import { request } from 'node:http';

/** One HTTP exchange as it went over the wire, for the headers fetch will not let a test set (Host). */
export interface RawHttpAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly text: string;
  /** The parsed JSON body; undefined when empty or not JSON. */
  readonly json: any;
}

/**
 * Sends one request with exactly these headers (node:http, so `host` and `origin` are sent as
 * given) to 127.0.0.1:port and reads the whole answer.
 */
export function rawHttp(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<RawHttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: {
          ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }),
          ...headers,
        },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: any;
          try {
            json = text === '' ? undefined : JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The response header names that start with `access-control-`. */
export function corsHeaderNames(answer: RawHttpAnswer): string[] {
  return Object.keys(answer.headers).filter((h) => h.startsWith('access-control-'));
}
