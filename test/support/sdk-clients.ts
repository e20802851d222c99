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
