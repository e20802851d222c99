import { stopAfterEach } from '../../support/cleanup';
import { GatewayProcess } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { postRaw } from '../../support/rpc';
import { ScriptedUpstream, upTool } from '../../support/scripted-upstream';

/**
 * A client's answer whose id has the relay form but does not open (forged, altered, another
 * gateway's) is refused and never reaches an upstream (docs/security.md "Answers to relayed
 * requests"). Answers are not requests: no rate limit counts them, so a line per refused answer
 * would let any caller write to the operator's log as fast as it can post. The refusals are
 * counted and logged at once, then at most once a minute (docs/operations.md §4 "What outsiders
 * can make the gateway log").
 */

const ANSWERS = 40;

describe('attack: a caller posting forged answers to relayed requests', () => {
  const track = stopAfterEach();

  it(`${ANSWERS} forged answers cost one log line`, async () => {
    const up = track(await ScriptedUpstream.start({ tools: [upTool('a')] }));
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([], { upstreams: [upstream('up', up.url)] }),
      }),
    );
    for (let i = 0; i < ANSWERS; i++) {
      const answer = await postRaw(
        gateway.mcpUrl,
        JSON.stringify({ jsonrpc: '2.0', id: `gw-relay.p.forged${i}`, result: {} }),
      );
      expect(answer.status).toBe(400);
    }
    await gateway.waitForOutput("A client's answer to a relayed request was refused (foreign)");
    const refused = gateway.output
      .split('\n')
      .filter((l) => l.includes("A client's answer to a relayed request was refused"));
    expect(refused).toHaveLength(1);
  }, 60_000);
});
