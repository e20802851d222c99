import { Module } from '@nestjs/common';
import { IdentityModule, ResourceServer } from '@app/identity';
import { RegistrationsModule } from '@app/registrations';
import { RegistryModule } from '@app/registry';
import { AdminAuditLog } from './admin-audit-log';
import { ADMIN_BEARER_VERIFIER, AdminAuthenticator } from './admin-authenticator';
import { adminVerifierFrom } from './resource-server-verifier';
import { UpstreamRegistrations } from './upstream-registrations.service';

/**
 * AdminModule (docs/operations.md §15): the registration API of upstream MCP servers over
 * RegistrationsModule (the store and what this replica applied from it), the admin role check
 * and the audit log. It lives in the main application context, beside the registry the
 * registrations feed; the management listener serves its HTTP face (/admin).
 */
@Module({
  imports: [RegistryModule, RegistrationsModule, IdentityModule],
  providers: [
    // with mcp.auth.mode jwt, an admin is a verified token carrying mcp.admin.scope
    // (docs/operations.md §15 "Access")
    { provide: ADMIN_BEARER_VERIFIER, useFactory: adminVerifierFrom, inject: [ResourceServer] },
    AdminAuthenticator,
    AdminAuditLog,
    UpstreamRegistrations,
  ],
  exports: [AdminAuthenticator, AdminAuditLog, UpstreamRegistrations],
})
export class AdminModule {}
