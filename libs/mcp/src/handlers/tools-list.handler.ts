import { Inject, Injectable, Optional } from '@nestjs/common';
import { RegistryService } from '@app/registry';
import { isModernVersion } from '@app/wire';
import {
  GatewayError,
  GatewayErrorCode,
  REGISTRY_UNAVAILABLE_MESSAGE,
} from '../errors/gateway-error';
import { PrecompressedBytes } from '../answers/gzip-splice';
import { callerListJson } from '../servers/caller-lists';
import { markFilteredForCaller } from './caller-filtered';
import { LiveLists } from './live-lists.service';
import { ToolSearch } from '../search/tool-search.service';
import { selectionKey, ToolSelections } from '../search/tool-selections';
import { VirtualServers } from '../servers/virtual-servers.service';
import {
  PreSerialized,
  type MethodContext,
  type MethodHandler,
  type MethodResult,
} from '../methods/method-handler';
import { partialSourcesMember } from './partial-sources';
import { legacyToolsJson, modernToolsJson, toolsJsonFor } from './revision-tool-fields';
import {
  appOnlyToolNames,
  keepsFromAppTools,
  toolsJsonWithoutAppTools,
} from '../servers/client-extensions';

/**
 * `tools/list`: the whole published catalog in (bundleId, name) order, each tool exactly as
 * its manifest published it, without `_meta` (contract §5, §7.4). Served from the JSON the
 * snapshot serialized once, and gzip-encoded from its compressed copy when the client accepts
 * it. No catalog yet → a JSON-RPC error, never an empty list.
 */
@Injectable()
export class ToolsListHandler implements MethodHandler {
  readonly method = 'tools/list';

  constructor(
    private readonly registry: RegistryService,
    private readonly live: LiveLists,
    @Optional() @Inject(ToolSearch) private readonly search: ToolSearch | null = null,
    @Optional() @Inject(ToolSelections) private readonly selections: ToolSelections | null = null,
  ) {}

  /**
   * The gateway's search tools; where the session may select tools, the select tool and the
   * session's selection too (docs/operations.md §16 "Tool selection"): a list of this session's,
   * never to be shared.
   */
  private async searchList(search: ToolSearch, context: MethodContext): Promise<MethodResult> {
    const modern = isModernVersion(context.protocolVersion);
    if (this.selections === null || !search.selectFor(context.access, context.sessionId, modern))
      return new PreSerialized(['{"tools":', search.toolsJson(), '}']);
    const key = selectionKey(context.sessionId as string, VirtualServers.serverOf(context.access));
    const selection = (await this.selections.get(key)) ?? [];
    // the selected tools with the Tool fields of the client's revision, as a plain list gives
    // them (docs/operations.md §11 "Tools for each revision")
    const tools = toolsJsonFor(modern, search.toolsJson(selection, context));
    return markFilteredForCaller(new PreSerialized(['{"tools":', tools, '}']));
  }

  handle(
    params: Readonly<Record<string, unknown>> | undefined,
    context: MethodContext,
  ): Promise<MethodResult> {
    if (params?.cursor !== undefined) {
      // The whole list is one page; no cursor was ever issued, so none is valid.
      return Promise.reject(
        new GatewayError(
          GatewayErrorCode.InvalidParams,
          'Invalid cursor: this server returns every tool in one page',
        ),
      );
    }
    const catalog = this.registry.current();
    if (catalog === undefined) {
      return Promise.reject(
        new GatewayError(GatewayErrorCode.RegistryUnavailable, REGISTRY_UNAVAILABLE_MESSAGE),
      );
    }
    // where tool search is on, the gateway's search tools stand for the list (docs/operations.md §16)
    if (this.search?.enabledFor(context.access) === true)
      return this.searchList(this.search, context);
    // lists: live upstreams: built per request for the caller (docs/operations.md §11 "Live lists")
    if (this.live.active) return this.live.list(this.method, catalog, context);
    const access = context.access;
    // docs/operations.md §13 "Access": a restricted caller gets the tools it may use, built once
    // per catalog and grant; everyone else the prebuilt bytes
    // the Tool fields of the revision served (revision-tool-fields.ts)
    const modern = isModernVersion(context.protocolVersion);
    // a client that did not declare MCP Apps is not given the tools only an app's view may call
    // (docs/operations.md §10 "Extensions")
    const hasAppTools = appOnlyToolNames(catalog).size > 0;
    const hideAppTools = hasAppTools && keepsFromAppTools(context.clientCapabilities);
    const tools = hideAppTools
      ? toolsJsonFor(modern, toolsJsonWithoutAppTools(catalog, access))
      : access === undefined || access.all
        ? ((modern ? modernToolsJson(catalog) : legacyToolsJson(catalog)) ??
          new PrecompressedBytes(catalog.toolsJsonBytes, catalog.toolsJsonDeflated))
        : toolsJsonFor(modern, callerListJson(catalog, 'tools', access));
    const result = new PreSerialized([
      '{"tools":',
      tools,
      partialSourcesMember(this.registry.partialSources(), access, (id) =>
        this.registry.namePrefixOf(id),
      ),
      '}',
    ]);
    // a list that depends on what the client declared (whichever way it was served) is not to
    // be shared (wire notes §3)
    return Promise.resolve(hasAppTools ? markFilteredForCaller(result) : result);
  }
}
