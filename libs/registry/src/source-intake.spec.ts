import { BundleRound, type BundleCandidate } from './bundle/bundle-intake';
import type { AcceptedManifest } from './manifest/manifest.types';
import { UpstreamRound } from './upstream/upstream-intake';
import type { UpstreamCopy } from './upstream/upstream-record';
import type { UpstreamContribution } from './upstream/upstream-contribution';

/**
 * The rounds of both kinds of source answer the registry's questions the same way
 * (libs/registry/src/source-intake.ts): which candidates there are, whether one changed, and
 * what a merge rejection makes of it; each kind records a rejection as its own failure.
 */

function bundleCandidate(fingerprint: string): BundleCandidate {
  return {
    copy: {
      manifest: { fingerprint } as AcceptedManifest,
      source: 'remote',
      fetchedAt: new Date(0),
    },
    pulled: true,
  };
}

function upstreamCopy(fingerprint: string): UpstreamCopy {
  return {
    contribution: { fingerprint } as UpstreamContribution,
    lists: {} as UpstreamCopy['lists'],
    source: 'remote',
    fetchedAt: new Date(0),
  };
}

describe('SourceRound', () => {
  const served: Record<string, string> = { a: 'fa', u: 'fu' };

  it('a bundle round: candidates in order, changed against the served copy, rejected to a failure', () => {
    const round = new BundleRound((id) => served[id]);
    round.candidates.set('a', bundleCandidate('fa'));
    round.candidates.set('b', bundleCandidate('fb'));
    expect(round.candidateIds()).toEqual(['a', 'b']);
    expect(round.candidateFingerprint('b')).toBe('fb');
    expect(round.candidateFingerprint('x')).toBeUndefined();
    // the same content as served is no change; a source that serves nothing yet has changed
    expect(round.isChanged('a')).toBe(false);
    expect(round.isChanged('b')).toBe(true);
    expect(round.isChanged('x')).toBe(false);

    expect(round.reject('b', 'ToolNameCollisionError', 'b.x is listed twice')).toBe(true);
    expect(round.hasCandidate('b')).toBe(false);
    // a bundle's status names the error type only: the detail is in the registry's log line
    expect(round.failures.get('b')).toEqual({ errorType: 'ToolNameCollisionError' });
    expect(round.reject('b', 'ToolNameCollisionError')).toBe(false);
  });

  it('an upstream round: a blamed copy notes the merge detail, one not adopted without blame does not', () => {
    const noted: [string, string][] = [];
    const round = new UpstreamRound(
      (id) => served[id],
      (id, detail) => noted.push([id, detail]),
    );
    round.candidates.set('u', upstreamCopy('fu2'));
    round.candidates.set('v', upstreamCopy('fv'));
    expect(round.isChanged('u')).toBe(true);
    expect(round.reject('u', 'CatalogTooLargeError', '201 tools, at most 200')).toBe(true);
    expect(round.reject('v', 'CatalogTooLargeError')).toBe(true);
    expect([...round.failures]).toEqual([
      ['u', 'CatalogTooLargeError'],
      ['v', 'CatalogTooLargeError'],
    ]);
    expect(noted).toEqual([['u', '201 tools, at most 200']]);
    expect(round.candidateIds()).toEqual([]);
  });
});
