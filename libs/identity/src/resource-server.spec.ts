import { Logger } from '@nestjs/common';
import type { GatewayConfig } from '@app/config';
import { ResourceServer } from './resource-server.service';

function server(profile: string): ResourceServer {
  return new ResourceServer({
    profile,
    mcp: { auth: { mode: 'none', requiredScopes: [], algorithms: [] } },
  } as unknown as GatewayConfig);
}

describe('mcp.auth mode none (docs/security.md "Threat model in one page")', () => {
  let warn: jest.SpyInstance;
  beforeEach(() => {
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });
  afterEach(() => warn.mockRestore());

  it('serves every request anonymously, with no metadata document', async () => {
    const rs = server('local');
    expect(await rs.authenticate(undefined)).toEqual({ kind: 'anonymous' });
    expect(await rs.authenticate('Bearer whatever')).toEqual({ kind: 'anonymous' });
    expect(rs.metadataDocument()).toBeUndefined();
    expect(warn).not.toHaveBeenCalled();
  });

  it('warns at boot outside the local profile', () => {
    server('ocp');
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]?.[0])).toContain('mcp.auth.mode is none under profile "ocp"');
  });
});
