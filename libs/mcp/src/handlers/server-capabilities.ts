import { Inject, Injectable } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import { RegistryService } from '@app/registry';

/**
 * The ServerCapabilities `initialize` advertises (issue 10 §6): `tools`, `resources`,
 * `prompts`, `completions` and `logging` only where at least one enabled source of the
 * published catalog can serve them (bundles serve tools; an upstream what its own
 * capabilities say). `listChanged` is true where the gateway pushes list changes (issue 11
 * §6): on 2026 `subscriptions/listen` streams, and on 2025 session GET streams, which exist
 * only when sessions are sealed (a stateless 2025 gateway passes false). Before any catalog
 * is published, only `tools`.
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

  /** @param listChanged whether this client can be told of list changes (see above) */
  current(listChanged = true): Record<string, object> {
    const features = this.registry.current()?.extras.features;
    if (features === undefined) return { tools: { listChanged } };
    const capabilities: Record<string, object> = {};
    if (features.tools || this.hasBundles) capabilities.tools = { listChanged };
    if (features.resources)
      capabilities.resources = {
        listChanged,
        ...(features.resourcesSubscribe ? { subscribe: true } : {}),
      };
    if (features.prompts) capabilities.prompts = { listChanged };
    if (features.completions) capabilities.completions = {};
    if (features.logging) capabilities.logging = {};
    return capabilities;
  }
}
