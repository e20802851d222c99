import { gatewayConfig, upstream } from '../support/fixtures';
import { GatewayProcess } from '../support/gateway-process';
import { V1Upstream } from '../support/mcp-upstreams';
import {
  CLIENT_KINDS,
  connectClient,
  connectV1,
  type AnyClient,
  type ClientKind,
} from '../support/sdk-clients';

/**
 * A long call whose upstream closes the call's stream midway (SSE polling, SEP-1699; MCP
 * 2025-11-25 Streamable HTTP, "Resumability and Redelivery"): a v1-SDK upstream with an event
 * store and `retry: 200` sends progress 1/2, closes the stream, and 600 ms later sends progress
 * 2/2 and the result. The gateway resumes with GET and `Last-Event-ID` after `retry` ms, within
 * the call's deadline (docs/operations.md §10 "Relaying"), so every agent gets what a direct
 * client gets. Before, the call ended at once as isError "the upstream's event stream ended
 * without the response".
 */
describe('a call whose upstream closes the stream midway is resumed', () => {
  let repo: V1Upstream;
  let gateway: GatewayProcess;

  /**
   * Calls the gateway's repo__poll-task with a progress token; the v1 client takes request
   * options third, the v2 client second.
   */
  async function pollTask(
    client: AnyClient,
    kind: ClientKind,
  ): Promise<{ result: any; progress: number[] }> {
    const progress: number[] = [];
    const onprogress = (p: { progress: number }): number => progress.push(p.progress);
    const params = { name: 'repo__poll-task', arguments: {} };
    const result =
      kind === 'v1'
        ? await (client as any).callTool(params, undefined, { onprogress })
        : await (client as any).callTool(params, { onprogress });
    return { result, progress };
  }

  beforeAll(async () => {
    repo = await V1Upstream.start({}, { resumable: true });
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], { upstreams: [upstream('repo', repo.url)] }),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await repo?.stop();
  });

  it('directly, the SDK client resumes and gets "done 7" and both progress events', async () => {
    const client = await connectV1(repo.url);
    try {
      const progress: number[] = [];
      const result = await client.callTool({ name: 'poll-task', arguments: {} }, undefined, {
        onprogress: (p) => progress.push(p.progress),
      });
      expect(result.content).toEqual([{ type: 'text', text: 'done 7' }]);
      expect(progress).toEqual([1, 2]);
    } finally {
      await client.close();
    }
  });

  it.each(CLIENT_KINDS)(
    'through the gateway, the %s client gets "done 7" and both progress events',
    async (kind) => {
      const resumesBefore = repo.requests.filter(
        (r) => r.httpMethod === 'GET' && r.headers['last-event-id'] !== undefined,
      ).length;
      const client = await connectClient(kind, gateway.mcpUrl);
      try {
        const { result, progress } = await pollTask(client, kind);
        expect(JSON.stringify(result)).not.toContain('isError');
        expect(result.content).toEqual([{ type: 'text', text: 'done 7' }]);
        expect(progress).toEqual([1, 2]);
      } finally {
        await client.close();
      }
      const resumes = repo.requests.filter(
        (r) => r.httpMethod === 'GET' && r.headers['last-event-id'] !== undefined,
      );
      expect(resumes.length).toBeGreaterThan(resumesBefore);
      // the resumption is on the gateway's session with the upstream
      const resume = resumes[resumes.length - 1]!;
      expect(resume.headers['mcp-session-id']).toBe(repo.issuedSessions[0]);
      expect(resume.headers.accept).toBe('text/event-stream');
    },
  );
});
