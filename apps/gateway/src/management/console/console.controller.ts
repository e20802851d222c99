import { Controller, Get, Inject, Param, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import { ConsoleAssets, type ConsoleAsset } from './console-assets';
import { McpAddress } from './mcp-address';

/**
 * What the console page reads first (GET /console/settings). `mcpUrl`: the configured
 * `mcp.console.mcpUrl`, or null (the page then uses its own host with `mcpPort`).
 */
export interface ConsoleSettings {
  readonly identity: string;
  readonly version: string;
  readonly profile: string;
  readonly mcpUrl: string | null;
  readonly mcpPort: number | null;
}

/**
 * Everything the page loads comes from here (no CDN, docs/console.md); scripts only from 'self'.
 * connect-src allows http(s) because "Run" calls /mcp on the MCP port, another origin.
 */
const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
    "connect-src 'self' http: https:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
};

/**
 * GET /console (docs/console.md): the operator console, a static page built with the project
 * (apps/console) and its assets under /console/assets/{name}. Management port only. The page
 * itself holds no secret: reads go to /actuator, writes to /admin with the operator's token.
 */
@Controller('console')
export class ConsoleController {
  constructor(
    private readonly assets: ConsoleAssets,
    private readonly mcpAddress: McpAddress,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  @Get()
  async page(@Res() reply: FastifyReply): Promise<void> {
    await this.send(reply, this.assets.get('index.html'));
  }

  @Get('settings')
  settings(): ConsoleSettings {
    return {
      identity: this.config.mcp.identity,
      version: this.config.version,
      profile: this.config.profile,
      mcpUrl: this.config.mcp.console.mcpUrl ?? null,
      mcpPort: this.mcpAddress.port ?? null,
    };
  }

  @Get('assets/:name')
  async asset(@Param('name') name: string, @Res() reply: FastifyReply): Promise<void> {
    await this.send(reply, name === 'index.html' ? undefined : this.assets.get(name));
  }

  private async send(reply: FastifyReply, asset: ConsoleAsset | undefined): Promise<void> {
    if (asset === undefined) {
      const reason = this.assets.built
        ? 'Not found'
        : 'The console is not built: run `npm run build` (it writes dist/console).';
      await reply
        .code(404)
        .header('content-type', 'text/plain; charset=utf-8')
        .header('x-content-type-options', 'nosniff')
        .send(reason);
      return;
    }
    await reply
      .code(200)
      .headers(PAGE_HEADERS)
      .header('content-type', asset.contentType)
      .send(asset.body);
  }
}
