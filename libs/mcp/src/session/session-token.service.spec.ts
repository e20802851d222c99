import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import type { GatewayConfig, SessionKey } from '@app/config';
import type { CallerIdentity } from '@app/identity';
import { SessionTokenService } from './session-token.service';

// The service logs every rejection and publish; keep the test output readable.
Logger.overrideLogger(false);

const TTL_SECONDS = 3600;
/** A whole second, so that expiry boundaries are exact. */
const NOW = Date.parse('2026-07-30T09:00:00.000Z');

const OLD: SessionKey = { kid: 'old', key: Buffer.alloc(32, 0x11) };
const NEW: SessionKey = { kid: 'new', key: Buffer.alloc(32, 0x22) };

/** Only the fields the service reads. */
function service(keys: SessionKey[], identity = 'gw-test', ephemeral = false): SessionTokenService {
  const config = {
    sessionKeys: keys,
    sessionKeysEphemeral: ephemeral,
    mcp: { identity, session: { ttlSeconds: TTL_SECONDS } },
  } as unknown as GatewayConfig;
  return new SessionTokenService(config);
}

/** Replaces one character of the sealed part with a different base64url character. */
function tamper(token: string, indexFromEnd: number): string {
  const i = token.length - indexFromEnd;
  const c = token.charAt(i);
  return `${token.slice(0, i)}${c === 'A' ? 'B' : 'A'}${token.slice(i + 1)}`;
}

describe('SessionTokenService: sealed Mcp-Session-Id (DESIGN "No sticky sessions")', () => {
  it('opens a token it issued, with the negotiated version, issue time and expiry', () => {
    const tokens = service([NEW]);
    const token = tokens.issue('2025-11-25', NOW);
    expect(tokens.open(token, NOW)).toEqual({
      protocolVersion: '2025-11-25',
      issuedAt: NOW / 1000,
      expiresAt: NOW / 1000 + TTL_SECONDS,
    });
  });

  it('issues "v1.<kid>.<base64url>" tokens of visible ASCII only', () => {
    const token = service([NEW]).issue('2025-06-18', NOW);
    expect(token).toMatch(/^v1\.new\.[A-Za-z0-9_-]+$/);
    expect(token).toMatch(/^[\x21-\x7e]+$/);
  });

  it('issues a different token each time (random IV), each one opening', () => {
    const tokens = service([NEW]);
    const a = tokens.issue('2025-11-25', NOW);
    const b = tokens.issue('2025-11-25', NOW);
    expect(a).not.toBe(b);
    expect(tokens.open(a, NOW)?.protocolVersion).toBe('2025-11-25');
    expect(tokens.open(b, NOW)?.protocolVersion).toBe('2025-11-25');
  });

  it('opens on another replica holding the same keys and identity', () => {
    const token = service([NEW]).issue('2025-11-25', NOW);
    expect(service([NEW]).open(token, NOW + 1000)?.protocolVersion).toBe('2025-11-25');
  });

  it('does not put the claims in clear text', () => {
    const token = service([NEW]).issue('2025-11-25', NOW);
    const sealed = Buffer.from(token.split('.')[2]!, 'base64url').toString('latin1');
    expect(sealed).not.toContain('2025-11-25');
    expect(token).not.toContain('2025');
  });

  it('says where its keys come from: MCP_SESSION_KEYS, or generated at boot (local profile)', () => {
    expect(service([NEW]).view).toEqual({ mode: 'sealed', keySource: 'env' });
    expect(service([NEW], 'gw-test', true).view).toEqual({
      mode: 'sealed',
      keySource: 'generated',
    });
  });
});

describe('SessionTokenService: stateless legacy mode (no MCP_SESSION_KEYS outside local; docs/operations.md §9)', () => {
  it('runs without a key: not sealed, shown as stateless with the warning', () => {
    const tokens = service([]);
    expect(tokens.sealed).toBe(false);
    expect(tokens.view).toEqual({
      mode: 'stateless',
      keySource: 'none',
      warning: expect.stringContaining('MCP_SESSION_KEYS is not set: stateless legacy mode'),
    });
  });

  it('opens no session id, not even one a sealed replica issued', () => {
    const issued = service([NEW]).issue('2025-11-25', NOW);
    expect(service([]).open(issued, NOW)).toBeUndefined();
  });

  it('refuses to seal (the codec never asks it to)', () => {
    expect(() => service([]).issue('2025-11-25', NOW)).toThrow('stateless mode');
  });
});

describe('SessionTokenService: anything not sealed by us, for us, and still valid opens to undefined', () => {
  const tokens = service([NEW]);
  const token = tokens.issue('2025-11-25', NOW);

  it.each([1, 5, 20, 30])('rejects a token with one character changed (%i from the end)', (i) => {
    const forged = tamper(token, i);
    expect(forged).not.toBe(token);
    expect(tokens.open(forged, NOW)).toBeUndefined();
  });

  it('rejects a truncated token or one with an extra segment', () => {
    expect(tokens.open(token.slice(0, -1), NOW)).toBeUndefined();
    expect(tokens.open(token.slice(0, -4), NOW)).toBeUndefined();
    expect(tokens.open(`${token}.x`, NOW)).toBeUndefined();
  });

  // Buffer.from(body, 'base64url') skips characters outside the alphabet: only the issued string may open.
  it.each([
    ['a character appended', (t: string) => `${t}A`],
    ['padding appended', (t: string) => `${t}==`],
    ['a character outside base64url inserted', (t: string) => `${t.slice(0, 12)}!${t.slice(12)}`],
  ])('rejects the issued token with %s (only the issued string opens)', (_label, change) => {
    expect(tokens.open(change(token), NOW)).toBeUndefined();
  });

  it.each(['v2', 'V1', 'v0', ''])('rejects a token whose prefix is %p instead of v1', (prefix) => {
    expect(tokens.open(`${prefix}${token.slice(2)}`, NOW)).toBeUndefined();
  });

  it.each(['', 'garbage', 'v1', 'v1.new', 'v1.new.', 'v1..abc', 'v1.new.AAAA'])(
    'rejects a malformed token %p',
    (text) => {
      expect(tokens.open(text, NOW)).toBeUndefined();
    },
  );

  it('rejects a token naming a key id it does not hold', () => {
    const relabelled = token.replace(/^v1\.new\./, 'v1.old.');
    expect(
      service([NEW, { kid: 'old', key: Buffer.alloc(32, 0x33) }]).open(relabelled, NOW),
    ).toBeUndefined();
    expect(service([NEW]).open(token.replace(/^v1\.new\./, 'v1.zzz.'), NOW)).toBeUndefined();
  });

  it('rejects a token sealed by a different key under the same key id', () => {
    expect(service([{ kid: 'new', key: Buffer.alloc(32, 0x44) }]).open(token, NOW)).toBeUndefined();
  });

  it('rejects a token sealed for another gateway identity (different associated data)', () => {
    const other = service([NEW], 'gw-other');
    expect(other.open(token, NOW)).toBeUndefined();
    expect(tokens.open(other.issue('2025-11-25', NOW), NOW)).toBeUndefined();
  });

  it('opens a token until its expiry and rejects it from the expiry on', () => {
    const expiry = NOW + TTL_SECONDS * 1000;
    expect(tokens.open(token, expiry - 1)?.expiresAt).toBe(expiry / 1000);
    expect(tokens.open(token, expiry)).toBeUndefined();
    expect(tokens.open(token, expiry + 86_400_000)).toBeUndefined();
  });
});

describe('SessionTokenService: key rotation', () => {
  it('opens a token sealed by the old key when that key is listed second, and seals new tokens with the first', () => {
    const before = service([OLD]);
    const oldToken = before.issue('2025-11-25', NOW);

    const rotated = service([NEW, OLD]);
    expect(rotated.open(oldToken, NOW)?.protocolVersion).toBe('2025-11-25');
    const newToken = rotated.issue('2025-11-25', NOW);
    expect(newToken.startsWith('v1.new.')).toBe(true);

    // A replica that has not rotated yet still opens nothing sealed by the new key...
    expect(before.open(newToken, NOW)).toBeUndefined();
    // ...and once the old key is retired, old tokens stop opening.
    expect(service([NEW]).open(oldToken, NOW)).toBeUndefined();
  });
});

describe('SessionTokenService: a session is bound to the caller that opened it', () => {
  const caller = (subject?: string, clientId?: string): CallerIdentity => ({
    subject,
    clientId,
    scopes: [],
    claims: {},
    token: `token-of-${subject ?? clientId ?? 'none'}`,
  });

  it('opens for the same caller (another token, same sub) and for no other', () => {
    const tokens = service([NEW]);
    const token = tokens.issue('2025-11-25', NOW, undefined, caller('alice'));
    expect(tokens.openFor(token, caller('alice'), NOW)?.protocolVersion).toBe('2025-11-25');
    expect(tokens.openFor(token, caller('bob'), NOW)).toBeUndefined();
    expect(tokens.openFor(token, undefined, NOW)).toBeUndefined();
    // a client whose client_id spells alice's sub is another caller
    expect(tokens.openFor(token, caller(undefined, 'alice'), NOW)).toBeUndefined();
  });

  it('records a fixed-size digest, never the subject itself', () => {
    const tokens = service([NEW]);
    const long = 'x'.repeat(500);
    const short = tokens.issue('2025-11-25', NOW, undefined, caller('a'));
    const longer = tokens.issue('2025-11-25', NOW, undefined, caller(long));
    expect(longer.length).toBe(short.length);
    expect(tokens.open(longer, NOW)?.callerDigest).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(JSON.stringify(tokens.open(longer, NOW))).not.toContain(long);
  });

  it('a session opened without a caller (auth off, or sealed before sessions recorded it) opens for no caller', () => {
    const tokens = service([NEW]);
    const token = tokens.issue('2025-11-25', NOW);
    expect(tokens.open(token, NOW)?.callerDigest).toBeUndefined();
    // else every caller holding the id would share its values (auth turned on, or a replica
    // with auth off beside ones with it): each initializes its own
    expect(tokens.openFor(token, caller('anyone'), NOW)).toBeUndefined();
    expect(tokens.openFor(token, undefined, NOW)?.protocolVersion).toBe('2025-11-25');
  });
});
