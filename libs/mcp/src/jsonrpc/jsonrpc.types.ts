/**
 * A numeric id that a JavaScript number cannot hold exactly (beyond 2^53, or a fraction):
 * kept as the client wrote it, so the answer carries the very same id.
 */
export class RawNumberId {
  constructor(readonly text: string) {}
}

/** JSON-RPC request id: MCP allows strings and numbers, never null (wire notes G-6). */
export type JsonRpcId = string | number | RawNumberId;

/** The id as JSON text, for the response envelope. */
export function idJson(id: JsonRpcId | null): string {
  return id instanceof RawNumberId ? id.text : JSON.stringify(id);
}

/**
 * The id as a `notifications/cancelled` names it: its `requestId` is parsed as any JSON number
 * is, so an id kept in the client's spelling (RawNumberId: `1.50`, an integer past 2^53) is
 * matched by the number that spelling reads as (MCP 2025-11-25 "Cancellation"; two ids of one
 * client that read as the same number are one request to it).
 */
export function idKey(id: JsonRpcId): string {
  return JSON.stringify(id instanceof RawNumberId ? Number(id.text) : id);
}

/**
 * One inbound POST body, classified at the edge before anything acts on it (DESIGN
 * "Classify before you catch").
 */
export type InboundMessage =
  | {
      readonly kind: 'request';
      readonly id: JsonRpcId;
      readonly method: string;
      /** undefined when absent; an object otherwise (anything else is `invalid-params`). */
      readonly params: Readonly<Record<string, unknown>> | undefined;
    }
  | { readonly kind: 'notification'; readonly method: string; readonly params: unknown }
  /** A client's reply to a server-to-client request. */
  | {
      readonly kind: 'response';
      readonly id: JsonRpcId | null;
      /**
       * The whole response object, for relaying it to the upstream that asked
       * (docs/operations.md §10 "Relaying").
       */
      readonly message?: Record<string, unknown>;
    }
  /** A JSON array: batches were removed in 2025-06-18 (B15). */
  | { readonly kind: 'batch' }
  | { readonly kind: 'invalid-request'; readonly id: JsonRpcId | null; readonly reason: string }
  | {
      readonly kind: 'invalid-params';
      readonly id: JsonRpcId;
      readonly method: string;
      readonly reason: string;
    }
  | { readonly kind: 'parse-error'; readonly reason: string };
