import type { ManifestTool } from './manifest.types';
import { packTools, unpackTools } from './manifest-transfer';

describe('packTools / unpackTools: tools between threads as one transferable buffer', () => {
  it('round-trips every field, multibyte text, tags (none, an empty list, some) and an absent timeout included', async () => {
    const tools: ManifestTool[] = [
      {
        name: 'p.a',
        publishedJson: '{"name":"p.a","description":"北京 🌍 \\u0000 \\"q\\""}',
        fingerprint: 'fp1',
        version: '1.0',
        timeoutMillis: 500,
        enabled: true,
        tags: ['billing', 'reference:v2'],
      },
      {
        name: 'p.b',
        publishedJson: '{"name":"p.b"}',
        fingerprint: 'fp2',
        version: 'v\u0000nul',
        enabled: false,
        tags: [],
      },
      { name: 'p.c', publishedJson: '{}', fingerprint: '', version: '', enabled: true },
    ];
    const packed = packTools(tools);
    expect(await unpackTools(packed)).toEqual(tools);
  });

  it('packs nothing into an empty buffer', async () => {
    const packed = packTools([]);
    expect(packed.count).toBe(0);
    expect(await unpackTools(packed)).toEqual([]);
  });
});
