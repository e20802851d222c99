/**
 * The JSON-RPC error codes the gateway writes or reads (JSON-RPC 2.0 §5.1; MCP: wire notes §5
 * in ../shared/reference; the contract §8 for -32001 "Tool not found"). Which code an error
 * takes in which era is decided in one place, libs/mcp's era mapping (`wire-errors.ts`); code
 * elsewhere names a member of this table (a const enum of values, so a code read off the wire
 * compares with it directly), never a number.
 */
export const JsonRpcCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** 2025 transport rejections (the official SDK's Streamable HTTP server answers these with 4xx). */
  ServerError: -32000,
  /** 2025: "Tool not found" (contract §8) and, with HTTP 404, "Session not found". */
  NotFound: -32001,
  /**
   * 2025 and earlier: a resource that does not exist (`resources/read`). 2026-07-28 must not emit
   * it and says -32602 (wire notes §5, G-17).
   */
  ResourceNotFound: -32002,
  /** 2026: an `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` or `Mcp-Param-*` header disagrees with the body. */
  HeaderMismatch: -32020,
  /** 2026: the request needs a client capability the client did not declare. */
  MissingClientCapability: -32021,
  /** 2026: the protocol version is not one the server speaks (data: supported, requested). */
  UnsupportedProtocolVersion: -32022,
  /**
   * 2025-11-25 only: the request needs the client to open a URL first (data: `elicitations`, URL
   * mode `elicitation/create` params). A 2026 client is asked by input_required instead.
   */
  UrlElicitationRequired: -32042,
  /**
   * A mcp.rateLimits bucket is empty (HTTP 429 + Retry-After). Outside -32768…-32000, which is
   * JSON-RPC's and MCP's: application errors belong outside it.
   */
  RateLimited: -31429,
} as const;

/** One of the codes above. */
export type JsonRpcCode = (typeof JsonRpcCode)[keyof typeof JsonRpcCode];
