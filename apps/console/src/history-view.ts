import type { HistoryAnswer, HistoryPublished, HistoryRejected } from './api.js';
import { h, replace, when } from './dom.js';

function names(label: string, list: readonly string[], count: number): HTMLElement | null {
  if (count === 0) return null;
  const more = count > list.length ? ` … and ${count - list.length} more` : '';
  return h(
    'div',
    { class: 'names' },
    h('h5', {}, `${label} (${count})`),
    h('ul', {}, ...list.map((n) => h('li', {}, h('code', {}, n)))),
    more !== '' ? h('p', { class: 'hint' }, more) : null,
  );
}

function published(e: HistoryPublished): HTMLElement {
  const revisions = Object.entries(e.revisions).filter(([, r]) => r.from !== r.to);
  return h(
    'li',
    { class: 'entry entry-published', 'data-seq': e.seq, 'data-kind': 'published' },
    h(
      'header',
      {},
      h('span', { class: 'badge badge-healthy' }, 'published'),
      h('time', { datetime: e.at }, when(e.at)),
      h(
        'span',
        {},
        ` ${e.toolCount} tools: +${e.counts.added} −${e.counts.removed} ~${e.counts.changed}`,
      ),
    ),
    names('Added', e.added, e.counts.added),
    names('Removed', e.removed, e.counts.removed),
    names('Changed', e.changed, e.counts.changed),
    revisions.length > 0
      ? h(
          'p',
          { class: 'revisions' },
          'Revisions: ',
          revisions.map(([id, r]) => `${id} ${r.from ?? 'none'} → ${r.to ?? 'none'}`).join(', '),
        )
      : null,
  );
}

function rejected(e: HistoryRejected): HTMLElement {
  return h(
    'li',
    { class: 'entry entry-rejected', 'data-seq': e.seq, 'data-kind': 'rejected' },
    h(
      'header',
      {},
      h('span', { class: 'badge badge-failed' }, 'rejected'),
      h('time', { datetime: e.at }, when(e.at)),
      h('span', { 'data-field': 'reason' }, ` ${e.reason}`),
      e.repeats > 1
        ? h('span', { class: 'hint' }, ` (${e.repeats} rounds in a row, last ${when(e.lastAt)})`)
        : null,
    ),
    h('p', {}, e.detail),
    h('p', {}, `Sources: ${e.sources.join(', ') || 'none'}. The previous catalog stayed.`),
  );
}

/**
 * The Catalog history view (docs/console.md "Catalog history"): the last publications and
 * rejections, newest first.
 */
export class HistoryView {
  private readonly list = h('ol', { class: 'history', id: 'history-list', reversed: true });
  private readonly note = h('p', { class: 'hint' });
  private lastKey?: string;

  constructor(root: HTMLElement) {
    root.append(h('h2', {}, 'Catalog history'), this.note, this.list);
  }

  render(answer: HistoryAnswer): void {
    const key = answer.entries
      .map((e) => `${e.seq}:${e.kind === 'rejected' ? e.repeats : ''}`)
      .join(',');
    if (key === this.lastKey) return;
    this.lastKey = key;
    this.note.textContent = `The last ${answer.capacity} changes of the catalog this replica serves, newest first (kept in memory).`;
    replace(
      this.list,
      ...answer.entries.map((e) => (e.kind === 'published' ? published(e) : rejected(e))),
    );
    if (answer.entries.length === 0) this.list.append(h('li', {}, 'No catalog published yet.'));
  }
}
