import { GatewayProcess, waitFor } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { rpc } from '../../support/rpc';
import { modernRequest } from '../../support/modern-rpc';
import { ScriptedUpstream, upTool } from '../../support/scripted-upstream';

jest.setTimeout(60_000);

/**
 * Wire notes §4 "Era bridging (hard cases)", 2025 backend → 2026 client: "2025-11-25 -32042
 * URLElicitationRequired maps to a URL-mode elicitation/create in inputRequests". Wire notes §5:
 * -32042 is a 2025-11-25-only code, and "-32020 … -32099 are reserved for the MCP spec.
 * Implementations MUST NOT emit undefined codes in that range" — 2026-07-28 defines no -32042.
 *
 * The gateway forwards the 2025 upstream's -32042 error to the 2026 client unchanged
 * (UpstreamRouter.forward, case 'error'), an undefined reserved code for that revision, and the
 * client is never asked to open the URL. A 2025 client keeps the -32042 (same era).
 */
const ELICITATION = {
  mode: 'url',
  elicitationId: 'el-1',
  url: 'https://auth.example.com/connect?x=1',
  message: 'Authorize access to the drive',
};

describe('a 2025 upstream answering -32042 URLElicitationRequired', () => {
  let opened = false;
  let leg: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    leg = await ScriptedUpstream.start({ tools: [upTool('drive')], sessionId: 'L1' });
    // the user opens the URL out of band: the upstream then answers the same request
    leg.onTool('drive', (req) =>
      req.params?.arguments?.authorized === true || opened
        ? { result: { content: [{ type: 'text', text: 'files' }] } }
        : {
            error: {
              code: -32042,
              message: 'This request requires more information.',
              data: { elicitations: [ELICITATION] },
            },
          },
    );
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], { upstreams: [upstream('leg', leg.url)] }),
    });
    await waitFor(async () => {
      const view = (await (
        await fetch(`${gateway.managementUrl}/actuator/upstreams`)
      ).json()) as any;
      return view.upstreams.every((u: any) => u.lastAttemptAt !== null);
    }, 20_000);
  });
  afterAll(async () => {
    await gateway?.stop();
    await leg?.stop();
  });

  it('a 2025 client keeps the -32042 error as the upstream sent it (same era)', async () => {
    const answer = await rpc(gateway.mcpUrl, 'tools/call', { name: 'leg__drive', arguments: {} });
    expect(answer.json.error).toMatchObject({
      code: -32042,
      data: { elicitations: [ELICITATION] },
    });
  });

  it('a 2026 client that declared elicitation.url gets input_required with a URL-mode elicitation/create, not the 2025-only code -32042', async () => {
    const answer = await modernRequest(
      gateway.mcpUrl,
      'tools/call',
      { name: 'leg__drive', arguments: {} },
      { elicitation: { form: {}, url: {} } },
    );
    // never a code 2026-07-28 does not define in the spec's reserved range
    expect(answer.json?.error?.code).not.toBe(-32042);
    expect(answer.json.result).toMatchObject({ resultType: 'input_required' });
    const requests: unknown[] = Object.values(answer.json.result.inputRequests ?? {});
    expect(requests).toContainEqual(
      expect.objectContaining({
        method: 'elicitation/create',
        params: expect.objectContaining({ mode: 'url', url: ELICITATION.url }),
      }),
    );
  });

  it("the 2026 client's retry sends the request again as it came, and gets the upstream's answer; one that did not declare elicitation.url gets -32021", async () => {
    const caps = { elicitation: { form: {}, url: {} } };
    const first = await modernRequest(
      gateway.mcpUrl,
      'tools/call',
      { name: 'leg__drive', arguments: {} },
      caps,
    );
    const [key] = Object.keys(first.json.result.inputRequests as object);
    opened = true;
    const before = leg.requests.length;
    const retry = await modernRequest(
      gateway.mcpUrl,
      'tools/call',
      {
        name: 'leg__drive',
        arguments: {},
        inputResponses: { [key as string]: { action: 'accept' } },
        requestState: first.json.result.requestState,
      },
      caps,
    );
    opened = false;
    expect(retry.json.result.content).toEqual([{ type: 'text', text: 'files' }]);
    const sent = leg.requests.slice(before).find((r) => r.method === 'tools/call');
    expect(sent?.message?.params).not.toHaveProperty('requestState');
    expect(sent?.message?.params).not.toHaveProperty('inputResponses');
    const formOnly = await modernRequest(
      gateway.mcpUrl,
      'tools/call',
      { name: 'leg__drive', arguments: {} },
      { elicitation: { form: {} } },
    );
    expect(formOnly.json.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { elicitation: { url: {} } } },
    });
  });
});

/**
 * -32042 is URLElicitationRequired in 2025-11-25 only (wire notes §5); 2026-07-28 defines no such
 * code, so a 2026 upstream that answers it sends an undefined code of the range that revision
 * reserves, not a URL to open: a 2026 client gets it as -32603 naming it, like any other
 * (docs/operations.md §10 "Routing"), and is never asked to open the URL it carries.
 */
describe('a 2026 upstream answering -32042 (a code its revision does not define)', () => {
  let modern: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    modern = await ScriptedUpstream.start({
      era: '2026',
      tools: [upTool('drive')],
      prompts: [{ name: 'brief' }],
    });
    const undefinedCode = () => ({
      error: {
        code: -32042,
        message: 'This request requires more information.',
        data: { elicitations: [ELICITATION] },
      },
    });
    modern.onTool('drive', undefinedCode);
    modern.on('prompts/get', undefinedCode);
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], {
        upstreams: [upstream('mod', modern.url, { protocol: '2026-07-28' })],
      }),
      waitReady: true,
    });
  });
  afterAll(async () => {
    await gateway?.stop();
    await modern?.stop();
  });

  it.each([
    ['tools/call', { name: 'mod__drive', arguments: {} }],
    ['prompts/get', { name: 'mod__brief' }],
  ])(
    '%s: a 2026 client gets -32603 naming -32042, never input_required with the URL',
    async (method, params) => {
      const answer = await modernRequest(gateway.mcpUrl, method, params, {
        elicitation: { form: {}, url: {} },
      });
      expect(answer.status).toBe(200);
      expect(answer.json.result).toBeUndefined();
      expect(answer.json.error.code).toBe(-32603);
      expect(answer.json.error.message).toContain('-32042');
      // nothing asks the client to open the URL (the error's data is the upstream's, as sent)
      expect(answer.text).not.toContain('input_required');
      expect(answer.text).not.toContain('elicitation/create');
    },
  );
});
