import { IsOptional, IsString, Matches } from './class-validator';

/** An absolute http(s) URL without credentials, query or fragment. */
const MCP_URL_PATTERN = /^https?:\/\/[^\s/?#@]+(\/[^\s?#]*)?$/;

/** The operator console on the management port (docs/operations.md §12, docs/console.md). */
export class ConsoleConfig {
  /**
   * The `/mcp` URL the console's "Run" calls, as the operator's browser reaches it (e.g.
   * `https://mcp.example.com/mcp` behind an ingress). Absent: the console derives it from its
   * own address with this gateway's bound PORT (`http://<console host>:<PORT>/mcp`). The
   * console's origin must be listed in `mcp.http.allowedOrigins` either way.
   */
  @IsOptional()
  @IsString({ message: 'must be an http(s) URL such as https://mcp.example.com/mcp' })
  @Matches(MCP_URL_PATTERN, {
    message: 'must be an http(s) URL such as https://mcp.example.com/mcp (no query, no user)',
  })
  mcpUrl?: string;
}
