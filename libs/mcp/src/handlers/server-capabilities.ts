import { Inject, Injectable } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import { RegistryService } from '@app/registry';

/**
 * The ServerCapabilities `initialize` advertises (issue 10 §6): `tools`, `resources`,
 * `prompts`, `completions` and `logging` only where at least one enabled source of the
 * published catalog can serve them (bundles serve tools; an upstream what its own
 * capabilities say). `listChanged` is false: the gateway does not push list changes to its
 * clients (they see a changed catalog on their next list). Before any catalog is published,
 * only `tools`.
 */
@Injectable()
export class ServerCapabilities {
  private readonly hasBundles: boolean;

  constructor(
    private readonly registry: RegistryService,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
  ) {
    this.hasBundles = config.bundles.some((b) => b.enabled);
  }

  current(): Record<string, object> {
    const features = this.registry.current()?.extras.features;
    if (features === undefined) return { tools: { listChanged: false } };
    const capabilities: Record<string, object> = {};
    if (features.tools || this.hasBundles) capabilities.tools = { listChanged: false };
    if (features.resources)
      capabilities.resources = {
        listChanged: false,
        ...(features.resourcesSubscribe ? { subscribe: true } : {}),
      };
    if (features.prompts) capabilities.prompts = { listChanged: false };
    if (features.completions) capabilities.completions = {};
    if (features.logging) capabilities.logging = {};
    return capabilities;
  }
}
