import { TimeSlicer } from '../time-slicer';
import type { ManifestTool } from './manifest.types';

/** Tools as bytes for a zero-copy transfer between threads, with the field boundaries. */
export interface PackedTools {
  readonly data: ArrayBuffer;
  /** Int32 byte offsets: FIELDS per tool, plus the end. */
  readonly offsets: ArrayBuffer;
  readonly count: number;
}

const FIELDS = 7; // name, publishedJson, fingerprint, version, timeoutMillis, enabled, tags

/**
 * `_meta.tags` as one field: '' for none, else a NUL then the tags joined by spaces (a tag is
 * [a-z0-9._:-], validate-manifest.ts), so an empty list stays apart from none.
 */
function tagsField(tags: readonly string[] | undefined): string {
  return tags === undefined ? '' : `\u0000${tags.join(' ')}`;
}

function tagsOf(field: string): string[] | undefined {
  return field === '' ? undefined : field.slice(1).split(' ').filter(Boolean);
}

/**
 * Packs validated tools into one byte buffer. Cloning thousands of objects, or one
 * multi-megabyte string, between threads costs tens of ms on the receiving event loop; a
 * transferred ArrayBuffer costs nothing, and is decoded field by field in slices.
 */
export function packTools(tools: readonly ManifestTool[]): PackedTools {
  const fields: string[] = [];
  for (const t of tools) {
    fields.push(
      t.name,
      t.publishedJson,
      t.fingerprint,
      t.version,
      t.timeoutMillis === undefined ? '' : String(t.timeoutMillis),
      t.enabled ? '1' : '0',
      tagsField(t.tags),
    );
  }
  const encoded = fields.map((f) => Buffer.from(f, 'utf8'));
  const total = encoded.reduce((n, b) => n + b.length, 0);
  const data = new ArrayBuffer(total);
  const bytes = new Uint8Array(data);
  const offsets = new Int32Array(encoded.length + 1);
  let at = 0;
  encoded.forEach((b, i) => {
    offsets[i] = at;
    bytes.set(b, at);
    at += b.length;
  });
  offsets[encoded.length] = at;
  return { data, offsets: offsets.buffer, count: tools.length };
}

/** Unpacks what packTools wrote, yielding to the event loop between slices. */
export async function unpackTools(
  packed: PackedTools,
  slicer = new TimeSlicer(),
): Promise<ManifestTool[]> {
  const bytes = Buffer.from(packed.data);
  const offsets = new Int32Array(packed.offsets);
  const field = (i: number): string => bytes.toString('utf8', offsets[i], offsets[i + 1]);
  const tools: ManifestTool[] = [];
  for (let t = 0; t < packed.count; t++) {
    await slicer.maybeYield();
    const base = t * FIELDS;
    const timeout = field(base + 4);
    const tags = tagsOf(field(base + 6));
    tools.push({
      name: field(base),
      publishedJson: field(base + 1),
      fingerprint: field(base + 2),
      version: field(base + 3),
      timeoutMillis: timeout === '' ? undefined : Number(timeout),
      enabled: field(base + 5) === '1',
      ...(tags === undefined ? {} : { tags }),
    });
  }
  return tools;
}
