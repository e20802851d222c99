import { GatewayProcess, waitFor } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { rpc } from '../../support/rpc';
import { modernRequest } from '../../support/modern-rpc';
import { ScriptedUpstream } from '../../support/scripted-upstream';

jest.setTimeout(60_000);

/**
 * Wire notes §4: `input_required` "Applies to tools/call, prompts/get and resources/read only.
 * Servers MUST NOT return it for any other method"; G-7: never an input_required to a 2025
 * client; docs/operations.md §11: the upstream's `requestState` always reaches a 2026 client
 * inside the gateway's sealed envelope. The gateway already refuses the analogous broken answer
 * `resultType: "task"` to a method other than tools/call with -32603 (UpstreamRouter.forward;
 * hostile-answers.e2e-spec.ts).
 *
 * A 2026 upstream answering `completion/complete` with `resultType: "input_required"`
 * reaches both a 2026 and a 2025 client verbatim: its raw, unsealed `requestState` and its
 * `inputRequests` included, which no client can act on (there is no retry for a completion)
 * and which a 2025 client cannot even read as a result.
 */
const ANSWER = {
  resultType: 'input_required',
  inputRequests: { q: { method: 'roots/list', params: {} } },
  requestState: 'upstream-raw-state',
  completion: { values: ['v'] },
};

describe('an upstream answering completion/complete with input_required', () => {
  let leg: ScriptedUpstream;
  let mod: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    const caps = { tools: {}, prompts: {}, completions: {} };
    leg = await ScriptedUpstream.start({ prompts: [{ name: 'p' }], capabilities: caps });
    mod = await ScriptedUpstream.start({
      era: '2026',
      prompts: [{ name: 'p' }],
      capabilities: caps,
    });
    for (const up of [leg, mod]) up.on('completion/complete', () => ({ result: ANSWER }));
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], { upstreams: [upstream('leg', leg.url), upstream('mod', mod.url)] }),
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
    await Promise.all([leg?.stop(), mod?.stop()]);
  });

  it.each([
    ['mod', '2025'],
    ['mod', '2026'],
  ])(
    'from the %s upstream, a %s client gets -32603 with its id, never the input_required',
    async (up, era) => {
      const params = {
        ref: { type: 'ref/prompt', name: `${up}__p` },
        argument: { name: 'a', value: '' },
      };
      const answer =
        era === '2025'
          ? await rpc(gateway.mcpUrl, 'completion/complete', params)
          : await modernRequest(gateway.mcpUrl, 'completion/complete', params, { roots: {} });
      expect(answer.text).not.toContain('upstream-raw-state');
      expect(answer.json.id).toBe(1);
      expect(answer.json.result).toBeUndefined();
      expect(answer.json.error.code).toBe(-32603);
    },
  );

  // A 2025 result has no resultType, inputRequests or requestState (wire notes §2): the members
  // are the upstream's own, cut, and its completion is complete (legacy-result-type.e2e-spec.ts)
  it.each(['2025', '2026'])(
    'from the 2025 upstream, a %s client gets the completion without those members',
    async (era) => {
      const params = {
        ref: { type: 'ref/prompt', name: 'leg__p' },
        argument: { name: 'a', value: '' },
      };
      const answer =
        era === '2025'
          ? await rpc(gateway.mcpUrl, 'completion/complete', params)
          : await modernRequest(gateway.mcpUrl, 'completion/complete', params, { roots: {} });
      expect(answer.text).not.toContain('upstream-raw-state');
      expect(answer.json.error).toBeUndefined();
      expect(answer.json.result.completion).toEqual({ values: ['v'] });
      expect(answer.json.result.inputRequests).toBeUndefined();
      expect(answer.json.result.resultType).toBe(era === '2025' ? undefined : 'complete');
    },
  );
});
