import Ajv2020 from 'ajv/dist/2020';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { GatewayProcess } from '../../support/gateway-process';
import { modernRequest } from '../../support/modern-rpc';
import { openLegacySession, rpc } from '../../support/rpc';
import { ScriptedUpstream, upTool } from '../../support/scripted-upstream';
import { connectV1 } from '../../support/sdk-clients';

const OBJECT_A = { type: 'object', properties: { a: { type: 'number' } }, required: ['a'] };

/**
 * Output schemas whose root is not `type: "object"` although they describe objects: 2025 clients
 * get them wrapped (`{type: "object", properties: {result: …}}`, wire notes §2.4, G-26), so a
 * call's object `structuredContent` is wrapped alike, `{result: {a: 1}}`, as the official
 * dual-era server (v2 SDK) wraps it; a 2026 client gets both as the upstream wrote them.
 */
const SCHEMAS: Record<string, Record<string, unknown>> = {
  viaRef: { $ref: '#/$defs/Out', $defs: { Out: OBJECT_A } },
  viaAnyOf: { anyOf: [OBJECT_A] },
  noType: { properties: { a: { type: 'number' } }, required: ['a'] },
  plainObject: OBJECT_A,
};

describe('structured output of a tool whose outputSchema root is not type "object"', () => {
  let modern: ScriptedUpstream;
  let legacy: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    [modern, legacy] = await Promise.all([
      ScriptedUpstream.start({
        era: '2026',
        tools: Object.entries(SCHEMAS).map(([name, outputSchema]) =>
          upTool(name, { outputSchema }),
        ),
      }),
      ScriptedUpstream.start({
        tools: Object.entries(SCHEMAS).map(([name, outputSchema]) =>
          upTool(name, { outputSchema }),
        ),
      }),
    ]);
    for (const name of Object.keys(SCHEMAS)) {
      const answer = { content: [{ type: 'text', text: '{"a":1}' }], structuredContent: { a: 1 } };
      modern.onTool(name, () => ({ result: { resultType: 'complete', ...answer } }));
      legacy.onTool(name, () => ({ result: answer }));
    }
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], {
        upstreams: [
          upstream('neu', modern.url, { protocol: '2026-07-28' }),
          upstream('old', legacy.url),
        ],
      }),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([modern?.stop(), legacy?.stop()]);
  });

  it.each(['neu', 'old'])(
    'a 2025 client gets structuredContent that conforms to the listed outputSchema (upstream %s)',
    async (prefix) => {
      const session = await openLegacySession(gateway.mcpUrl);
      const list = await rpc(gateway.mcpUrl, 'tools/list', {}, session);
      const ajv = new Ajv2020({ strict: false });
      for (const name of Object.keys(SCHEMAS)) {
        const listed = (list.json.result.tools as { name: string; outputSchema: object }[]).find(
          (t) => t.name === `${prefix}__${name}`,
        );
        expect(listed?.outputSchema).toMatchObject({ type: 'object' });
        const call = await rpc(
          gateway.mcpUrl,
          'tools/call',
          { name: `${prefix}__${name}`, arguments: {} },
          session,
        );
        const structured = call.json.result.structuredContent;
        expect(structured).toEqual(name === 'plainObject' ? { a: 1 } : { result: { a: 1 } });
        expect([name, ajv.validate(listed!.outputSchema, structured), ajv.errors ?? null]).toEqual([
          name,
          true,
          null,
        ]);
      }
    },
  );

  it("the official v1 client (which checks structuredContent against the listed schema) takes every tool's result", async () => {
    const client = await connectV1(gateway.mcpUrl);
    try {
      await client.listTools();
      for (const prefix of ['neu', 'old'])
        for (const name of Object.keys(SCHEMAS)) {
          const result = await client.callTool({ name: `${prefix}__${name}`, arguments: {} });
          expect(result.isError).not.toBe(true);
        }
    } finally {
      await client.close();
    }
  });

  it('a 2026 client gets the schema and the value as the upstream wrote them', async () => {
    for (const name of ['viaRef', 'viaAnyOf', 'noType']) {
      const call = await modernRequest(
        gateway.mcpUrl,
        'tools/call',
        { name: `neu__${name}`, arguments: {} },
        {},
      );
      expect(call.json.result.structuredContent).toEqual({ a: 1 });
    }
  });

  it('with live lists, which pass the schema on as listed, an object result is not wrapped either', async () => {
    const live = await GatewayProcess.start({
      mcp: gatewayConfig([], {
        upstreams: [upstream('neu', modern.url, { protocol: '2026-07-28', lists: 'live' })],
      }),
      waitReady: true,
    });
    try {
      const session = await openLegacySession(live.mcpUrl);
      const list = await rpc(live.mcpUrl, 'tools/list', {}, session);
      const listed = (list.json.result.tools as { name: string; outputSchema: object }[]).find(
        (t) => t.name === 'neu__viaAnyOf',
      );
      expect(listed?.outputSchema).toEqual(SCHEMAS.viaAnyOf);
      const call = await rpc(
        live.mcpUrl,
        'tools/call',
        { name: 'neu__viaAnyOf', arguments: {} },
        session,
      );
      expect(call.json.result.structuredContent).toEqual({ a: 1 });
      const ajv = new Ajv2020({ strict: false });
      expect(ajv.validate(listed!.outputSchema, call.json.result.structuredContent)).toBe(true);
    } finally {
      await live.stop();
    }
  });
});
