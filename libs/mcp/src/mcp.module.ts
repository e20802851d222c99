import { Module } from '@nestjs/common';
import { ExecutionModule } from '@app/execution';
import { IdentityModule } from '@app/identity';
import { RegistryModule } from '@app/registry';
import { CacheHintsService } from './codecs/cache-hints';
import { LegacyCodec } from './codecs/legacy.codec';
import { ModernCodec } from './codecs/modern.codec';
import { HttpAccessPolicy } from './http/http-access.policy';
import { InFlightRequests } from './answers/in-flight-requests';
import { McpExchanges } from './http/mcp-exchanges.service';
import { McpHttpServer } from './http/mcp-http-server';
import { McpController } from './http/mcp.controller';
import { McpMethodsModule } from './mcp-methods.module';
import { McpRelayModule } from './mcp-relay.module';
import { McpSessionsModule } from './mcp-sessions.module';
import { McpTransport } from './http/mcp-transport.service';
import { SessionEnding } from './http/session-ending.service';

/**
 * McpModule: the front door of /mcp over its parts (docs/architecture.md "McpModule's parts").
 * It holds the front door itself — the /mcp listeners, the HTTP checks, the two era codecs and
 * the transport between them — and imports the methods (McpMethodsModule), the relays
 * (McpRelayModule) and what they all read of sessions and virtual servers (McpSessionsModule).
 * /mcp is served by McpController when the module runs in a Nest fastify application (the
 * default); McpHttpServer serves it on plain node:http instead with MCP_HTTP_SERVER=node.
 */
@Module({
  imports: [
    McpSessionsModule,
    McpRelayModule,
    McpMethodsModule,
    RegistryModule,
    ExecutionModule,
    IdentityModule,
  ],
  controllers: [McpController],
  providers: [
    HttpAccessPolicy,
    InFlightRequests,
    McpExchanges,
    McpHttpServer,
    LegacyCodec,
    ModernCodec,
    CacheHintsService,
    McpTransport,
    SessionEnding,
  ],
  // McpHttpServer for the node:http listener, GatewayTasks (McpRelayModule) for the shutdown
  exports: [McpHttpServer, McpRelayModule],
})
export class McpModule {}
