import { parseStored, serialize } from './registration-store';
import type { StoredRegistration } from './registration-record';

const record = (extra: Record<string, unknown> = {}): StoredRegistration =>
  ({
    upstream: { id: 'u', url: 'http://10.0.0.3/mcp', ...extra },
    createdAt: 1,
    updatedAt: 2,
    createdBy: 'admin',
    updatedBy: 'admin',
    version: 3,
  }) as unknown as StoredRegistration;

describe('parseStored: a registration read back from Redis', () => {
  it('reads a record as written', () => {
    expect(parseStored(serialize(record()), 'u')).toMatchObject({ version: 3, createdBy: 'admin' });
  });

  it('is bounded before it is parsed: longer than two management bodies can make is no record', () => {
    const parse = jest.spyOn(JSON, 'parse');
    try {
      // 8 × 2 MiB and 64 KiB (storedJsonLimit of two 1 MiB bodies), and one more
      const raw = serialize(record({ description: 'x'.repeat(8 * 2 * 1_048_576 + 65_536) }));
      expect(parseStored(raw, 'u')).toBeUndefined();
      expect(parse).not.toHaveBeenCalled();
    } finally {
      parse.mockRestore();
    }
  });
});
