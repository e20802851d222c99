import { Injectable } from '@nestjs/common';
import type { MethodContext } from '../methods/method-handler';
import { LIST_CHANGED_METHOD } from '../listen/catalog-changes';
import { NotificationHub } from '../listen/notification-hub.service';
import { callerKey } from '../session/caller-key';
import { SessionTokenService } from '../session/session-token.service';
import { SharedValueNotStoredError } from '../session/session-values';
import { ToolSearch } from './tool-search.service';
import { selectionKey, ToolSelections } from './tool-selections';
import { VirtualServers } from '../servers/virtual-servers.service';

const LIST_CHANGED = { jsonrpc: '2.0', method: LIST_CHANGED_METHOD.tools } as const;

function textResult(value: object, isError = false): object {
  return {
    content: [{ type: 'text', text: JSON.stringify(value) }],
    structuredContent: value,
    ...(isError ? { isError: true } : {}),
  };
}

/**
 * `gateway__select_tools` (docs/operations.md §16 "Tool selection"): the names a 2025 session
 * gives become its `tools/list` (beside the search tools), replacing its earlier selection;
 * names the caller may not use are answered back as unknown and not kept. The session is then
 * told `notifications/tools/list_changed`: on the call's own answer stream when it has one, else
 * on its GET streams on this replica that are open on the same path.
 */
@Injectable()
export class SelectTool {
  constructor(
    private readonly search: ToolSearch,
    private readonly selections: ToolSelections,
    private readonly sessions: SessionTokenService,
    private readonly hub: NotificationHub,
  ) {}

  /** Whether this request is offered the select tool. */
  offeredTo(context: MethodContext, modern: boolean): boolean {
    return this.search.selectFor(context.access, context.sessionId, modern);
  }

  /**
   * Selects; `context` is a request `offeredTo` said yes to, and `args` were checked against the
   * tool's inputSchema (`names`: at most MAX_SELECTED_TOOLS strings).
   */
  async select(args: Readonly<Record<string, unknown>>, context: MethodContext): Promise<object> {
    const given = args.names as readonly string[];
    const sessionId = context.sessionId as string;
    const claims = this.sessions.openFor(sessionId, context.caller);
    if (claims === undefined)
      return textResult(
        { selected: [], unknown: given, warning: 'The session has expired: initialize again' },
        true,
      );
    const { selected, unknown } = this.search.selectable(given, context);
    const server = VirtualServers.serverOf(context.access);
    let notStored: string | undefined;
    try {
      await this.selections.set(
        selectionKey(sessionId, server),
        selected,
        claims.expiresAt * 1000,
        Date.now(),
        callerKey(context.caller),
      );
    } catch (err) {
      if (!(err instanceof SharedValueNotStoredError)) throw err;
      notStored = `The selection ${err.message}`;
    }
    if (context.relay !== undefined) context.relay(LIST_CHANGED);
    // only the streams on this path: the selection is per session and path
    else this.hub.toSession(sessionId, server, JSON.stringify(LIST_CHANGED));
    return textResult(
      { selected, unknown, ...(notStored === undefined ? {} : { warning: notStored }) },
      notStored !== undefined,
    );
  }
}
