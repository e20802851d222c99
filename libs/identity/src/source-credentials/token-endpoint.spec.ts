import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TokenExchangeAuthorization } from '@app/config';
import { clientCredentialsToken, exchangeToken, TokenEndpointError } from './token-endpoint';

/** A server on 127.0.0.1 that records each request's body and answers with `answer`. */
async function serve(
  answer: (res: import('node:http').ServerResponse) => void,
): Promise<{ url: string; bodies: string[]; server: Server }> {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      bodies.push(body);
      answer(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/token`, bodies, server };
}

describe('the token endpoint client never follows a redirect (docs/security.md, "Runtime registrations")', () => {
  let elsewhere: Awaited<ReturnType<typeof serve>>;
  let endpoint: Awaited<ReturnType<typeof serve>>;

  beforeAll(async () => {
    elsewhere = await serve((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: 'harvested', token_type: 'Bearer' }));
    });
    endpoint = await serve((res) => {
      res.writeHead(307, { location: elsewhere.url });
      res.end();
    });
  });
  afterAll(async () => {
    for (const s of [endpoint, elsewhere])
      await new Promise<void>((resolve) => s.server.close(() => resolve()));
  });

  const auth = (): TokenExchangeAuthorization => ({
    mode: 'tokenExchange',
    tokenEndpoint: endpoint.url,
    clientId: 'gateway',
    clientSecret: 's3cret',
    audience: 'https://calc.example/mcp',
  });

  it("a 307 to another origin fails the exchange, and the caller's subject_token never gets there", async () => {
    const outcome = exchangeToken(auth(), 'caller-token');
    await expect(outcome).rejects.toThrow(TokenEndpointError);
    await expect(outcome).rejects.toThrow(/redirect \(HTTP 307\)/);
    expect(endpoint.bodies).toHaveLength(1);
    expect(endpoint.bodies[0]).toContain('subject_token=caller-token');
    expect(elsewhere.bodies).toEqual([]);
  });

  it('a 307 fails the client-credentials grant as well, and the client secret never gets there', async () => {
    await expect(clientCredentialsToken(auth())).rejects.toThrow(/redirect \(HTTP 307\)/);
    expect(elsewhere.bodies).toEqual([]);
  });
});
