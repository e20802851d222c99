import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIRST_MODERN_VERSION } from '@app/wire';
import { probeVerdict, type ProbeVerdict } from './era-probe';
import { MAX_MESSAGE_DEPTH, readReply } from './reply-reader';
import { UpstreamFailure } from './upstream-types';

interface Fixture {
  readonly name: string;
  readonly status: number;
  readonly body: string;
  readonly probeVersion?: string;
  readonly verdict: ProbeVerdict | { readonly failure: string; readonly status?: number };
}

const PROBE_ID = 'server-discover-probe-1';
const { fixtures } = JSON.parse(
  readFileSync(join(__dirname, 'testing', 'probe-fixtures.json'), 'utf8'),
) as { fixtures: Fixture[] };

/** `DEEP` stands for a body one level deeper than any upstream message may nest. */
function bodyOf(fixture: Fixture): string {
  if (fixture.body !== 'DEEP') return fixture.body;
  const depth = MAX_MESSAGE_DEPTH + 1;
  return `{"jsonrpc":"2.0","id":"${PROBE_ID}","result":${'['.repeat(depth)}${']'.repeat(depth)}}`;
}

/** The verdict, or the failure it throws, for one answer read as the connection reads it. */
function verdictOf(fixture: Fixture): unknown {
  try {
    const reply = readReply(
      {
        kind: 'body',
        head: { status: fixture.status, mediaType: 'application/json' },
        body: Buffer.from(bodyOf(fixture)),
      },
      PROBE_ID,
      undefined,
    );
    return probeVerdict(reply, fixture.probeVersion ?? FIRST_MODERN_VERSION);
  } catch (err) {
    if (!(err instanceof UpstreamFailure)) throw err;
    return { failure: err.kind, ...(err.status !== undefined && { status: err.status }) };
  }
}

describe('the era probe on its corpus of answers (testing/probe-fixtures.json)', () => {
  it('holds answers of every verdict', () => {
    const kinds = new Set(
      fixtures.map((f) => ('failure' in f.verdict ? 'failure' : f.verdict.kind)),
    );
    expect([...kinds].sort()).toEqual(['failure', 'legacy', 'modern', 'retry', 'unsupported']);
  });

  it.each(fixtures.map((f) => [f.name, f] as const))('%s', (_name, fixture) => {
    expect(verdictOf(fixture)).toEqual(fixture.verdict);
  });
});
