import { GatewayProcess, waitFor } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { rpc } from '../../support/rpc';
import { ScriptedUpstream, upTool } from '../../support/scripted-upstream';

jest.setTimeout(60_000);

const MAY_HAVE_RUN =
  'It may still have run on the upstream; check before retrying a tool that changes data.';

/**
 * docs/operations.md §10 "Routing" / "Resumed streams": a call whose request reached the upstream
 * and was answered with an SSE stream that ended before the response (SSE polling, an event id
 * set) is resumed with GET + Last-Event-ID. The request ran (or may have run) on the upstream
 * by then: whatever stops the resumption, the client's isError must end "It may still have
 * run …", never claim the request was not sent.
 *
 * UpstreamConnection.resumeStream runs the GET through exchange(), whose failures before a
 * response head (failureBeforeHead) are `unreachable` with mayHaveRun false — right for a
 * first POST, wrong for a resumption of a request that was sent and answered:
 *  - the upstream restarts between the stream's end and the GET (connection refused): the
 *    client reads "the upstream refused the connection (ECONNREFUSED)" as a call that never
 *    left, and may well send a data-changing tool again;
 *  - the upstream's `id:` is not a valid HTTP header value (an emoji, a control character):
 *    undici refuses to send the GET and the client reads "the request could not be sent
 *    (invalid request)", which is false: the tools/call was sent and answered.
 */
describe('a call whose resumption fails after its request was sent and answered', () => {
  let up: ScriptedUpstream;
  let restarting: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    up = await ScriptedUpstream.start({ tools: [upTool('emoji'), upTool('control')] });
    // the stream sets an event id and ends: the gateway resumes after `retry:` ms
    up.onTool('emoji', () => ({
      raw: 'id: \u{1F600}\nretry: 300\ndata: \n\n',
      headers: { 'content-type': 'text/event-stream' },
    }));
    up.onTool('control', () => ({
      raw: 'id: a\u0001b\nretry: 300\ndata: \n\n',
      headers: { 'content-type': 'text/event-stream' },
    }));
    restarting = await ScriptedUpstream.start({ tools: [upTool('charge')] });
    restarting.onTool('charge', () => {
      // the upstream goes away (a restart) before the gateway comes back for the rest
      setTimeout(() => void restarting.stop(), 300).unref();
      return {
        raw: 'id: e1\nretry: 2000\ndata: \n\n',
        headers: { 'content-type': 'text/event-stream' },
      };
    });
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], {
        upstreams: [
          upstream('up', up.url, { timeouts: { callMillis: 10_000 } }),
          upstream('restarting', restarting.url, { timeouts: { callMillis: 10_000 } }),
        ],
      }),
    });
    await waitFor(async () => {
      const view = (await (
        await fetch(`${gateway.managementUrl}/actuator/upstreams`)
      ).json()) as any;
      return view.upstreams.every((u: any) => u.status === 'healthy');
    }, 20_000);
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([up?.stop(), restarting?.stop()]);
  });

  it('the upstream restarted before the resumption: the isError says the call may have run', async () => {
    const answer = await rpc(gateway.mcpUrl, 'tools/call', {
      name: 'restarting__charge',
      arguments: {},
    });
    // the tools/call reached the upstream and was answered with a stream
    expect(restarting.calls('charge')).toHaveLength(1);
    expect(answer.json.id).toBe(1);
    expect(answer.json.result.isError).toBe(true);
    // got: "Upstream restarting: the upstream refused the connection (ECONNREFUSED)"
    expect(answer.json.result.content[0].text).toContain(MAY_HAVE_RUN);
  });

  it.each(['emoji', 'control'])(
    'an event id (%s) that cannot be sent back: not "could not be sent", and it may have run',
    async (tool) => {
      const answer = await rpc(gateway.mcpUrl, 'tools/call', {
        name: `up__${tool}`,
        arguments: {},
      });
      expect(up.calls(tool)).toHaveLength(1);
      expect(answer.json.id).toBe(1);
      expect(answer.json.result.isError).toBe(true);
      const text: string = answer.json.result.content[0].text;
      // got: "Upstream up: the request could not be sent (invalid request)"
      expect(text).not.toContain('could not be sent');
      expect(text).toContain(MAY_HAVE_RUN);
    },
  );
});
