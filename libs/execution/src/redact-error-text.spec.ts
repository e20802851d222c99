import { redactErrorText } from './redact-error-text';

describe('redactErrorText: no address or credential from a Tool Service reaches an agent', () => {
  it('masks a field example: a Java stack line with an internal address and a password', () => {
    const out = redactErrorText(
      'java.lang.NullPointerException at com.corp.internal.Db(10.20.30.40:5432) password=hunter2 retry later',
    );
    expect(out).not.toContain('10.20.30.40');
    expect(out).not.toContain('5432');
    expect(out).not.toContain('hunter2');
    expect(out).toContain('java.lang.NullPointerException');
    expect(out).toContain('password=[hidden]');
    expect(out).toContain('retry later');
  });

  it.each([
    ['a URL', 'failed to reach http://billing.ax-hub.svc.cluster.local:8080/api/v2', 'billing'],
    ['a JDBC URL', 'jdbc:postgresql://db-primary:5432/claims refused', 'db-primary'],
    ['a Redis URL', 'redis://:s3cret@cache:6379 down', 's3cret'],
    ['host:port', 'connect to db-primary:5432 timed out', 'db-primary'],
    ['an internal host name', 'lookup of claims.intra failed', 'claims.intra'],
    ['a cluster service name', 'no route to payments.ax-hub.svc', 'payments'],
    ['an IPv6 address', 'peer [fd00:10:20::30]:443 reset', 'fd00'],
    ['a full IPv6 address', 'peer 2001:db8:85a3:0:0:8a2e:370:7334 reset', '2001'],
    ['an e-mail address', 'notify ops@corp.example failed', 'ops@'],
    [
      'a bearer token',
      'upstream said Bearer abcdefghijklmnop1234 is invalid',
      'abcdefghijklmnop1234',
    ],
    ['a JWT', 'token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl rejected', 'eyJhbGci'],
    ['an API key in JSON', '{"error":"denied","api_key":"AKIA1234567890"}', 'AKIA1234567890'],
    ['a secret: value', 'config secret: topsecretvalue missing', 'topsecretvalue'],
    ['a lowercase bearer value', 'upstream said bearer abc.def.ghi', 'abc.def.ghi'],
    ['a camelCase token key', '{"accessToken":"at-1"}', 'at-1'],
    [
      'an AWS secret',
      'AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      'wJalrXUtnFEMI',
    ],
    ['an OpenAI-style key', 'key sk-proj-abcdefghijklmnopqrstuvwxyz123456 revoked', 'abcdefghij'],
    ['a PEM block', `-----BEGIN RSA ${'PRIVATE'} KEY-----MIIEpAIBAAKCAQEA`, 'MIIEpAIB'],
    ['a password word and its value', 'login failed: passwd hunter2', 'hunter2'],
    ['a JSON-escaped credential', '{"error":"\\"password\\":\\"hunter2\\""}', 'hunter2'],
    ['an IPv6 zone id', 'peer fe80::1%eth0 unreachable', 'eth0'],
    ['a GitHub token', 'ghp_abcdefghijklmnopqrstuvwxyz0123456789 expired', 'ghp_'],
  ])('masks %s', (_, text, leaked) => {
    expect(redactErrorText(text)).not.toContain(leaked);
  });

  it('keeps a 4xx explanation of bad input readable', () => {
    const text =
      'age must be between 18 and 80; coverage.plan "gold" is not offered at 12:30:45 (code E-1042)';
    expect(redactErrorText(text)).toBe(text);
  });

  it('keeps a masked JSON body valid JSON', () => {
    const out = redactErrorText('{"error":"denied","password":"hunter2","n":1}');
    expect(JSON.parse(out)).toEqual({ error: 'denied', password: '[hidden]', n: 1 });
  });
});
