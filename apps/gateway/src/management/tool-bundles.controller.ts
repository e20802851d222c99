import { Controller, Get } from '@nestjs/common';
import { RegistryService, type ToolBundlesView } from '@app/registry';

/**
 * GET /actuator/toolBundles (contract §9): every configured bundle, never-successful and
 * disabled ones included; no manifestUrl, no namePrefix, failure reasons as type names.
 * Read-only, management port only.
 */
@Controller('actuator')
export class ToolBundlesController {
  constructor(private readonly registry: RegistryService) {}

  @Get('toolBundles')
  toolBundles(): ToolBundlesView {
    return this.registry.view();
  }
}
