import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { rpc } from '../support/rpc';
import { ScriptedUpstream, upTool } from '../support/scripted-upstream';

/**
 * An upstream's tool schemas are bounded in the work they cause on the event loop
 * (docs/operations.md §10 "What is checked", SchemaBounds in
 * libs/registry/src/manifest/schema-checker.ts): ajv compiles a schema in one synchronous call
 * whose time grows with its size (an `anyOf` of 8,000 objects took 9.6 s on every pull), so a
 * schema of more than 300 members (object members and array items of any type) is checked
 * against its meta-schema instead of compiled, and one of more than 40,000 is refused unread. Shown without a timing assertion:
 * a large schema whose only fault is one compilation finds (an unresolved `$ref`) passes, so
 * it was not compiled, while the same fault in a small schema is still refused.
 */

/** An inputSchema whose `x` is an anyOf of `n` object branches: about 7n members. */
function wideSchema(n: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const anyOf = Array.from({ length: n }, (_, i) => ({
    type: 'object',
    properties: { [`k${i}`]: { type: 'string' } },
    required: [`k${i}`],
  }));
  return { type: 'object', properties: { x: { anyOf }, ...extra } };
}

const missingRef = { y: { $ref: '#/$defs/nowhere' } };

const tools = (): Record<string, unknown>[] => [
  // about 21,000 members: checked by the meta-schema, published
  upTool('wide', { inputSchema: wideSchema(3_000) }),
  // large, and only a compilation would find its unresolved $ref: published all the same
  upTool('wideRef', { inputSchema: wideSchema(100, missingRef) }),
  // small: compiled, and refused for its unresolved $ref (the rule is unchanged)
  upTool('smallRef', { inputSchema: wideSchema(2, missingRef) }),
  // 42,000 members: refused without being read further
  upTool('huge', { inputSchema: wideSchema(6_000) }),
  // 2,000 subschemas written as `false` (about 3 s of ajv): members count, whatever their type
  upTool('patterns', {
    inputSchema: {
      type: 'object',
      patternProperties: Object.fromEntries(
        Array.from({ length: 2_000 }, (_, i) => [`^p${i}$`, false]),
      ),
      additionalProperties: false,
      properties: missingRef,
    },
  }),
  upTool('strict', {
    inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  }),
];

const names = (answer: { json: { result: { tools: { name: string }[] } } }): string[] =>
  answer.json.result.tools.map((t) => t.name).sort();

describe("an upstream's schemas cannot hold the event loop", () => {
  const track = stopAfterEach();

  it('pulled and live lists: large schemas checked by their meta-schema, the largest refused, small ones compiled as before; argument validation of a large schema left to the upstream', async () => {
    const pulled = track(await ScriptedUpstream.start({ tools: tools() }));
    const live = track(await ScriptedUpstream.start({ tools: tools() }));
    const gateway = track(
      await GatewayProcess.start({
        mcp: gatewayConfig([], {
          upstreams: [
            upstream('pulled', pulled.url, { validateArguments: true }),
            upstream('live', live.url, { lists: 'live' }),
          ],
        }),
        waitReady: true,
      }),
    );
    const listed = names(await rpc(gateway.mcpUrl, 'tools/list'));
    for (const id of ['pulled', 'live']) {
      expect(listed).toEqual(
        expect.arrayContaining([
          `${id}__wide`,
          `${id}__wideRef`,
          `${id}__patterns`,
          `${id}__strict`,
        ]),
      );
      expect(listed).not.toContain(`${id}__smallRef`);
      expect(listed).not.toContain(`${id}__huge`);
    }
    // log lines are JSON: the entry's name is quoted with escapes
    const tooLarge =
      'left out: inputSchema does not compile: it is too large to check (more than 40000 schema members)';
    await gateway.waitForOutput(tooLarge, 10_000);
    await gateway.waitForOutput('live tools entry \\"huge\\" left out', 10_000);
    await gateway.waitForOutput('live tools entry \\"smallRef\\" left out', 10_000);
    const lines = gateway.output.split('\n');
    for (const prefix of ['Upstream pulled: tools entry', 'Upstream live: live tools entry']) {
      const mine = lines.filter((l) => l.includes(prefix));
      expect(mine.filter((l) => l.includes('huge') && l.includes(tooLarge))).toHaveLength(1);
      expect(
        mine.filter((l) => l.includes('smallRef') && l.includes('does not compile as JSON Schema')),
      ).toHaveLength(1);
      expect(mine.filter((l) => l.includes('wide'))).toHaveLength(0);
    }

    // validateArguments on: a small schema is checked by the gateway, a large one by the upstream
    const refused = await rpc(gateway.mcpUrl, 'tools/call', {
      name: 'pulled__strict',
      arguments: {},
    });
    expect(refused.json.result.isError).toBe(true);
    expect(pulled.calls('strict')).toHaveLength(0);
    const passed = await rpc(gateway.mcpUrl, 'tools/call', {
      name: 'pulled__wide',
      arguments: { x: 5 },
    });
    expect(passed.json.result.isError).toBeFalsy();
    expect(pulled.calls('wide')).toHaveLength(1);
  });
});
