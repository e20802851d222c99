import { MasterReplidReply } from './master-replid';

describe('MasterReplidReply: the master a store read was served by', () => {
  it("reads master_replid from INFO replication's text", () => {
    const reply = new MasterReplidReply(() => undefined, 'records');
    const info = '# Replication\r\nrole:master\r\nmaster_replid:4f2a9c\r\nmaster_repl_offset:7\r\n';
    expect(reply.of([null, info])).toBe('4f2a9c');
    expect(reply.of([null, 'role:master\r\n'])).toBeUndefined();
    expect(reply.of(undefined)).toBeUndefined();
  });

  it('a refused INFO (an ACL without @dangerous) reads as no master, said once naming what is then not written back', () => {
    const warned: string[] = [];
    const reply = new MasterReplidReply((text) => warned.push(text), 'registrations');
    const refused = new Error("NOPERM User gw has no permissions to run the 'info' command");
    expect(reply.of([refused, null])).toBeUndefined();
    expect(reply.of([refused, null])).toBeUndefined();
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatch(/^Redis refused INFO \(NOPERM .*\): registrations a failover lost/);
  });
});
