import { Controller, Get } from '@nestjs/common';
import { SessionTokenService, type SessionsView } from '@app/mcp';
import { RegistryService, type ToolBundlesView } from '@app/registry';

/**
 * The registry's view plus how 2025 sessions are kept (stateless mode is visible:
 * docs/operations.md §9).
 */
export type ToolBundlesAnswer = ToolBundlesView & { readonly sessions: SessionsView };

/**
 * GET /actuator/toolBundles (contract §9): every configured bundle, never-successful and
 * disabled ones included; no manifestUrl, no namePrefix, failure reasons as type names.
 * `sessions`: `{mode: "sealed", keySource: "env" | "generated"}` or
 * `{mode: "stateless", keySource: "none", warning}` (MCP_SESSION_KEYS unset outside local).
 * Read-only, management port only.
 */
@Controller('actuator')
export class ToolBundlesController {
  constructor(
    private readonly registry: RegistryService,
    private readonly sessions: SessionTokenService,
  ) {}

  @Get('toolBundles')
  toolBundles(): ToolBundlesAnswer {
    return { ...this.registry.view(), sessions: this.sessions.view };
  }
}
