// class-transformer's @Type needs the metadata polyfill that Nest normally loads first.
import 'reflect-metadata';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ConfigValidationError } from './config-errors';
import type { GatewayConfig } from './gateway-config';
import { loadGatewayConfig } from './load-config';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function load(listen?: unknown): GatewayConfig {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-gateway-listen-'));
  dirs.push(dir);
  const mcp: Record<string, unknown> = {
    identity: 'gw-test',
    bundles: [
      {
        id: 'alpha',
        manifestUrl: 'http://alpha.svc:8080/tool-manifest',
        baseEndpoint: 'http://alpha.svc:8080/mcp',
        namePrefix: 'alpha.',
      },
    ],
  };
  if (listen !== undefined) mcp.listen = listen;
  writeFileSync(join(dir, 'gateway.yaml'), stringify({ mcp }));
  return loadGatewayConfig({ env: { MCP_CONFIG_FILE: 'gateway.yaml' }, cwd: dir, version: '1' });
}

function problems(listen: unknown): string {
  try {
    load(listen);
  } catch (err) {
    if (err instanceof ConfigValidationError) return err.message;
    throw err;
  }
  throw new Error('the config was accepted');
}

describe('mcp.listen (docs/operations.md §11 "Notification streams")', () => {
  it('defaults to 1024 streams, 8 per caller, 1 MiB queued per stream, a 15 s keep-alive and a 60 s caller recheck', () => {
    expect(load().mcp.listen).toEqual({
      maxStreams: 1024,
      maxStreamsPerCaller: 8,
      maxQueuedBytes: 1_048_576,
      keepAliveMillis: 15_000,
      recheckSeconds: 60,
    });
  });

  it('takes other values within bounds', () => {
    expect(
      load({
        maxStreams: 3,
        maxStreamsPerCaller: 2,
        maxQueuedBytes: 4096,
        keepAliveMillis: 250,
        recheckSeconds: 1,
      }).mcp.listen,
    ).toEqual({
      maxStreams: 3,
      maxStreamsPerCaller: 2,
      maxQueuedBytes: 4096,
      keepAliveMillis: 250,
      recheckSeconds: 1,
    });
  });

  it('refuses the boot naming every broken field', () => {
    const message = problems({
      maxStreams: 0,
      maxStreamsPerCaller: 0,
      maxQueuedBytes: 100,
      keepAliveMillis: 50,
      recheckSeconds: 0,
      keepAlive: 1,
    });
    expect(message).toContain('mcp.listen.maxStreams:');
    expect(message).toContain('mcp.listen.maxStreamsPerCaller');
    expect(message).toContain('mcp.listen.maxQueuedBytes');
    expect(message).toContain('mcp.listen.keepAliveMillis');
    expect(message).toContain('mcp.listen.recheckSeconds');
    expect(problems({ recheckSeconds: 3601 })).toContain('mcp.listen.recheckSeconds');
    expect(message).toContain('mcp.listen.keepAlive: unknown key');
    expect(problems({ maxStreams: '10' })).toContain('mcp.listen.maxStreams');
    expect(problems('yes')).toContain('mcp.listen');
  });
});
