import { ManagementHostPolicy } from './management-host-policy';

describe('ManagementHostPolicy: which Host names the management port serves', () => {
  const none = new ManagementHostPolicy([]);
  const listed = new ManagementHostPolicy([
    'gw-mgmt.example.com',
    'ops.example:9443',
    'any.example:*',
    'FQDN.Example.',
  ]);

  it.each([
    '127.0.0.1',
    '127.0.0.1:9090',
    '10.42.3.17:9090',
    '192.168.1.5',
    '[::1]',
    '[::1]:9090',
    '[fd00::a:1]:9090',
    '[::ffff:10.0.0.1]:9090',
    'localhost',
    'localhost:9090',
    'LOCALHOST:9090',
    'localhost.:9090',
    'console.localhost:9090',
    'a.b.localhost',
  ])('always serves the IP literal or loopback name %s', (host) => {
    expect(none.admits(host)).toBe(true);
  });

  it('serves a request without Host (HTTP/1.0: no browser sends one)', () => {
    expect(none.admits(undefined)).toBe(true);
  });

  it.each([
    'attacker.example:9090',
    'attacker.example',
    'localhost.attacker.example:9090',
    'notlocalhost:9090',
    '127.0.0.1.nip.io:9090',
    '2130706433:9090',
    '0x7f000001',
    '127.1:9090',
    '[::1',
    '::1',
    '',
    'a b',
    'user@127.0.0.1',
    '127.0.0.1:99999',
    '.localhost',
    '.localhost:9090',
    'a..localhost',
    '.',
    '..',
  ])('refuses the name or malformed Host %j when nothing is listed', (host) => {
    expect(none.admits(host)).toBe(false);
  });

  it.each([
    ['gw-mgmt.example.com', true],
    ['gw-mgmt.example.com:9090', true],
    ['GW-MGMT.example.com:443', true],
    ['gw-mgmt.example.com.:9090', true],
    ['ops.example:9443', true],
    ['ops.example:9090', false],
    ['ops.example', false],
    ['any.example:1234', true],
    ['fqdn.example:9090', true],
    ['sub.gw-mgmt.example.com:9090', false],
    ['attacker.example:9090', false],
  ])('with mcp.management.allowedHosts: %s → %s', (host, admitted) => {
    expect(listed.admits(host)).toBe(admitted);
  });
});
