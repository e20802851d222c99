import type { GatewayConfig } from '@app/config';
import type { CallerIdentity } from '@app/identity';
import {
  ForwardedError,
  GatewayError,
  GatewayErrorCode,
  ToolDeniedError,
} from '../errors/gateway-error';
import { SerializedResult } from '../methods/method-handler';
import { ToolCallAudit } from './tool-call-audit';

const config = (enabled: boolean): GatewayConfig =>
  ({ mcp: { audit: { enabled } } }) as unknown as GatewayConfig;

const ALICE: CallerIdentity = {
  subject: 'alice',
  clientId: 'agent-app',
  scopes: ['mcp'],
  claims: {},
  token: 'eyJ.secret.token',
};

describe('ToolCallAudit (docs/operations.md §14 "Audit")', () => {
  let lines: Record<string, unknown>[];
  // the members as the gateway writes them, parsed: the text must be valid JSON
  const sink = (members: string): void =>
    void lines.push(JSON.parse(`{${members}}`) as Record<string, unknown>);
  beforeEach(() => {
    lines = [];
  });

  const headers = {
    'x-request-id': 'r-1',
    guid: 'g-1',
    authorization: 'Bearer eyJ.secret.token',
    'employee-no': 'E-123',
    'virtual-employee-no': 'V-456',
  };

  it.each([
    [{ result: { content: [] } }, 'ok', undefined],
    [{ result: { content: [], isError: true } }, 'isError', undefined],
    [{ result: new SerializedResult('{"isError":true}', { isError: true }) }, 'isError', undefined],
    [
      { error: new GatewayError(GatewayErrorCode.ToolNotFound, 'Tool not found: x') },
      'error',
      'tool_not_found',
    ],
    [{ error: new ToolDeniedError('Tool not found: x') }, 'denied', 'tool_not_found'],
    [
      { error: new GatewayError(GatewayErrorCode.RateLimited, 'Rate limit hit') },
      'limited',
      'rate_limited',
    ],
    [{ error: new ForwardedError(-32602, 'bad') }, 'error', -32602],
    [{ error: new Error('crash') }, 'error', 'internal'],
  ])('outcome of %p is %s', (outcome, kind, code) => {
    new ToolCallAudit(config(true), sink).record(
      ALICE,
      { name: 'calc__add', sourceId: 'calc' },
      outcome,
      12.34,
      headers,
    );
    expect(lines).toHaveLength(1);
    expect(lines[0]).toEqual({
      msg: 'audit tools/call',
      audit: 'tools/call',
      caller: 'sub:alice',
      subject: 'alice',
      clientId: 'agent-app',
      tool: 'calc__add',
      source: 'calc',
      outcome: kind,
      ...(code === undefined ? {} : { errorCode: code }),
      durationMs: 12.3,
      requestId: 'r-1',
      guid: 'g-1',
    });
    const text = JSON.stringify(lines[0]);
    for (const secret of ['eyJ.secret.token', 'E-123', 'V-456']) expect(text).not.toContain(secret);
  });

  it('names a client-credentials caller client:<client_id> (never as a subject), no caller by null', () => {
    const audit = new ToolCallAudit(config(true), sink);
    // a client whose id equals a user's sub is still not that user
    const machine: CallerIdentity = { clientId: 'alice', scopes: [], claims: {}, token: 't' };
    audit.record(machine, { name: 'x' }, { result: {} }, 1, {});
    audit.record(ALICE, { name: 'x' }, { result: {} }, 1, {});
    audit.record(undefined, { name: 'x' }, { result: {} }, 1, {});
    expect(lines.map((l) => [l.caller, l.subject, l.clientId])).toEqual([
      ['client:alice', null, 'alice'],
      ['sub:alice', 'alice', 'agent-app'],
      [null, null, null],
    ]);
  });

  it("cuts every caller's text it copies to 128 characters: request id, guid, subject, client id, tool name", () => {
    const long = (c: string): string => c.repeat(10_000);
    const caller: CallerIdentity = {
      subject: long('s'),
      clientId: long('c'),
      scopes: [],
      claims: {},
      token: 't',
    };
    new ToolCallAudit(config(true), sink).record(caller, { name: long('n') }, { result: {} }, 1, {
      'x-request-id': long('r'),
      guid: [long('g'), 'second'],
    });
    expect(lines[0]).toMatchObject({
      caller: `sub:${'s'.repeat(124)}`,
      subject: 's'.repeat(128),
      clientId: 'c'.repeat(128),
      tool: 'n'.repeat(128),
      requestId: 'r'.repeat(128),
      guid: 'g'.repeat(128),
    });
    expect(JSON.stringify(lines[0]).length).toBeLessThan(1200);
  });

  it('writes nothing when mcp.audit.enabled is false', () => {
    new ToolCallAudit(config(false), sink).record(ALICE, { name: 'x' }, { result: {} }, 1, {});
    expect(lines).toEqual([]);
  });
});
