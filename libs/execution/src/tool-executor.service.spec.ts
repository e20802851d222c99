import 'reflect-metadata';
import type { IncomingHeaders } from './call-tool-result';
import { buildToolRequestHeaders } from './tool-executor.service';

const BASE = {
  'content-type': 'application/json',
  accept: 'application/json, text/plain;q=0.9, */*;q=0.1',
};

/** The five caller headers, with values a careless proxy would rewrite. */
const CALLER = {
  guid: '9f2c:AB/cd+ef==',
  'x-request-id': 'req 1; a=b, "c"',
  'mcp-session-id': 'v1.k1.AbC-_x',
  'employee-no': 'ENC(QUJD+/=)::%41',
  'virtual-employee-no': 'v\u00e9-07 ~!@#$%^&*()',
} as const;

/** Headers that must never reach a Tool Service. */
const OTHERS = {
  cookie: 'session=abc',
  host: 'gateway.example:8080',
  'x-forwarded-for': '203.0.113.9',
  'content-length': '17',
  'mcp-protocol-version': '2025-11-25',
  'accept-encoding': 'gzip',
  connection: 'keep-alive',
  'x-custom': '1',
};

describe('contract §10: the five caller headers go through unchanged, nothing else does', () => {
  it('copies guid, x-request-id, mcp-session-id, employee-no and virtual-employee-no unchanged', () => {
    expect(buildToolRequestHeaders({ ...CALLER }, { mode: 'none' })).toEqual({
      ...BASE,
      ...CALLER,
    });
  });

  it('does not send a caller header that is absent', () => {
    const headers = buildToolRequestHeaders(
      { guid: 'g-1', 'employee-no': undefined },
      { mode: 'none' },
    );
    expect(headers).toEqual({ ...BASE, guid: 'g-1' });
    expect(Object.keys(headers)).not.toContain('employee-no');
    expect(Object.keys(headers)).not.toContain('virtual-employee-no');
  });

  it('sends only content-type and accept when the caller sent none of the five', () => {
    expect(buildToolRequestHeaders({}, { mode: 'none' })).toEqual(BASE);
  });

  it('never sends other incoming headers (cookie, host, x-forwarded-for, ...)', () => {
    const headers = buildToolRequestHeaders({ ...OTHERS, ...CALLER }, { mode: 'none' });
    expect(Object.keys(headers).sort()).toEqual(
      ['accept', 'content-type', ...Object.keys(CALLER)].sort(),
    );
    for (const name of Object.keys(OTHERS)) expect(headers).not.toHaveProperty(name);
    expect(JSON.stringify(headers)).not.toContain('203.0.113.9');
    expect(JSON.stringify(headers)).not.toContain('session=abc');
  });

  it('sends content-type application/json whatever the caller sent', () => {
    const incoming: IncomingHeaders = { 'content-type': 'text/plain', accept: 'text/html' };
    expect(buildToolRequestHeaders(incoming, { mode: 'none' })).toEqual(BASE);
  });

  it('sends the first value of a repeated caller header', () => {
    expect(buildToolRequestHeaders({ guid: ['first', 'second'] }, { mode: 'none' }).guid).toBe(
      'first',
    );
  });
});

describe('contract §10: Authorization follows the bundle configuration', () => {
  const incoming: IncomingHeaders = { ...CALLER, authorization: 'Bearer caller-token' };

  it('mode none never sends Authorization, even when the caller sent one', () => {
    const headers = buildToolRequestHeaders(incoming, { mode: 'none' });
    expect(headers).not.toHaveProperty('authorization');
    expect(JSON.stringify(headers)).not.toContain('caller-token');
  });

  it("mode passthrough sends the caller's Authorization unchanged", () => {
    expect(buildToolRequestHeaders(incoming, { mode: 'passthrough' }).authorization).toBe(
      'Bearer caller-token',
    );
  });

  it('mode passthrough sends no Authorization when the caller sent none', () => {
    expect(buildToolRequestHeaders({ ...CALLER }, { mode: 'passthrough' })).toEqual({
      ...BASE,
      ...CALLER,
    });
  });

  it("mode static sends the configured value instead of the caller's", () => {
    const headers = buildToolRequestHeaders(incoming, { mode: 'static', value: 'Basic c3ZjOnB3' });
    expect(headers).toEqual({ ...BASE, ...CALLER, authorization: 'Basic c3ZjOnB3' });
    expect(JSON.stringify(headers)).not.toContain('caller-token');
  });

  it('mode static sends the configured value when the caller sent none', () => {
    expect(buildToolRequestHeaders({}, { mode: 'static', value: 'Bearer svc' }).authorization).toBe(
      'Bearer svc',
    );
  });
});
