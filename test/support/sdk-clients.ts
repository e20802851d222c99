import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ClientCapabilities as V1Capabilities } from '@modelcontextprotocol/sdk/types.js';
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
  type ClientCapabilities as V2Capabilities,
} from '@modelcontextprotocol/client';

/** The official v1 SDK client (2025-11-25) connected over Streamable HTTP. */
export async function connectV1(
  url: string,
  headers: Record<string, string> = {},
  capabilities: V1Capabilities = {},
): Promise<V1Client> {
  const client = new V1Client({ name: 'e2e-v1', version: '1.0.0' }, { capabilities });
  await client.connect(new V1Transport(new URL(url), { requestInit: { headers } }));
  return client;
}

/** The official v2 SDK client in its default (legacy, initialize-based) mode. */
export async function connectV2(
  url: string,
  headers: Record<string, string> = {},
  capabilities: V2Capabilities = {},
): Promise<V2Client> {
  const client = new V2Client({ name: 'e2e-v2', version: '2.0.0' }, { capabilities });
  await client.connect(new V2Transport(new URL(url), { requestInit: { headers } }));
  return client;
}

/**
 * The four agent kinds of the mixed-era e2e (test/modern/mixed-era.e2e-spec.ts): the v1 client and
 * the v2 client in its three modes.
 */
export type ClientKind = 'v1' | 'v2-legacy' | 'v2-auto' | 'v2-pin';
export const CLIENT_KINDS: readonly ClientKind[] = ['v1', 'v2-legacy', 'v2-auto', 'v2-pin'];
/** The era each kind ends up in against a dual-era gateway. */
export const ERA_OF: Readonly<Record<ClientKind, '2025' | '2026'>> = {
  v1: '2025',
  'v2-legacy': '2025',
  'v2-auto': '2026',
  'v2-pin': '2026',
};

export interface ConnectOptions {
  readonly headers?: Record<string, string>;
  readonly capabilities?: V2Capabilities;
  /** The transport's fetch (e.g. `oneConnectionPerRequest` from balancer.ts). */
  readonly fetch?: typeof fetch;
}

/** What the e2e tests use of either SDK's client (both have these methods). */
export type AnyClient = V1Client | V2Client;

/**
 * An official SDK client of the given kind connected over Streamable HTTP: `v1` (2025-11-25
 * sessions), `v2-legacy` (the v2 default: initialize), `v2-auto` (server/discover probe, falls
 * back to initialize), `v2-pin` (`{pin: '2026-07-28'}`, no fallback).
 */
export async function connectClient(
  kind: ClientKind,
  url: string,
  options: ConnectOptions = {},
): Promise<AnyClient> {
  const transportOptions = {
    requestInit: { headers: options.headers ?? {} },
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  };
  const info = { name: `e2e-${kind}`, version: '1.0.0' };
  if (kind === 'v1') {
    const client = new V1Client(info, {
      capabilities: options.capabilities ?? {},
    });
    await client.connect(new V1Transport(new URL(url), transportOptions));
    return client;
  }
  const mode = kind === 'v2-auto' ? 'auto' : kind === 'v2-pin' ? { pin: '2026-07-28' } : 'legacy';
  const client = new V2Client(info, {
    capabilities: options.capabilities ?? {},
    versionNegotiation: { mode },
  });
  await client.connect(new V2Transport(new URL(url), transportOptions));
  return client;
}
