import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { callTool } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

/**
 * What a start loads is most of its CPU (docs/benchmarks.md, "Start-up: what every gateway
 * loads"): packages a configuration does not use stay unloaded. A preload script records every
 * CommonJS module the gateway process had loaded when it exits.
 */
describe('the modules a gateway loads', () => {
  it('a bundle-only gateway without auth or Redis: no class-validator index (validator.js, libphonenumber-js), no jose, no ioredis; its config still validated and its tools called', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcpgw-modules-'));
    const loaded = join(dir, 'loaded.json');
    const preload = join(dir, 'record-modules.js');
    writeFileSync(
      preload,
      `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(loaded)}, JSON.stringify(Object.keys(require.cache))));\n`,
    );
    const service = await TestToolService.start(manifest('m', [tool({ name: 'm.echo' })]));
    const gateway = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('m', service, 'm.')]),
      env: { NODE_OPTIONS: `--require ${preload}` },
      waitReady: true,
    });
    try {
      const call = await callTool(gateway.mcpUrl, 'm.echo', {});
      expect(call.result.isError).not.toBe(true);
    } finally {
      expect(await gateway.stop()).toBe(0);
      await service.stop();
    }
    const modules = JSON.parse(readFileSync(loaded, 'utf8')) as string[];
    const of = (pkg: string) => modules.filter((m) => m.includes(`/node_modules/${pkg}/`));
    // the config models' decorators did load, each from its own file
    expect(of('class-validator').length).toBeGreaterThan(5);
    expect(modules.filter((m) => m.endsWith('/node_modules/class-validator/cjs/index.js'))).toEqual(
      [],
    );
    // validator.js: only the files of the rules the models use (Matches, MinLength), not its index
    expect(modules.filter((m) => m.endsWith('/node_modules/validator/index.js'))).toEqual([]);
    expect(of('validator').length).toBeLessThan(6);
    expect(of('libphonenumber-js')).toEqual([]);
    expect(of('jose')).toEqual([]);
    expect(of('ioredis')).toEqual([]);
  });

  it('a config field that breaks a class-validator rule still stops the boot naming it', async () => {
    const gateway = GatewayProcess.spawn({
      mcp: gatewayConfig([], { registry: { refreshIntervalSeconds: 'often' } }),
    });
    const code = await gateway.waitForExit(30_000);
    expect(code).not.toBe(0);
    expect(gateway.output).toContain('mcp.registry.refreshIntervalSeconds');
  });
});
