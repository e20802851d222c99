import type { BundleView, SourceReview, UpstreamRecord, UpstreamView } from './api.js';
import { age, field, h, prettyJson, when } from './dom.js';

/** Buttons of the cards (shown only when the console is writable). */
export interface CardActions {
  setEnabled(id: string, enabled: boolean): void;
  remove(id: string): void;
  /** Approves a held tool of a pinned source by the digest shown (docs/operations.md §6). */
  approve(sourceId: string, name: string, digest: string): void;
}

function shown(value: unknown): string {
  return value === undefined ? '(none)' : typeof value === 'string' ? value : prettyJson(value);
}

/**
 * A pinned source's held tools (docs/console.md "Sources"; docs/operations.md §6 "Pinned tool
 * definitions"): each with what changed, approved beside pulled, and an Approve button when
 * the console is writable.
 */
function reviewSection(
  sourceId: string,
  review: SourceReview | undefined,
  actions: CardActions | undefined,
): HTMLElement | null {
  if (review === undefined) return null;
  return h(
    'section',
    { class: 'review', 'data-field': 'review', 'aria-label': `Held for review in ${sourceId}` },
    h('h4', {}, `Held for review: ${review.heldTools} tool${review.heldTools === 1 ? '' : 's'}`),
    ...review.held.map((tool) =>
      h(
        'div',
        { class: 'held', 'data-tool': tool.name },
        h(
          'p',
          {},
          h('strong', {}, tool.name),
          ` — ${tool.kind === 'new' ? 'new, never approved' : `changed since approved by ${tool.approvedBy ?? '?'} ${when(tool.approvedAt ?? null)}`}; held since ${when(tool.since)}`,
        ),
        h(
          'dl',
          { class: 'diff' },
          ...tool.changes.flatMap((change) => [
            h('dt', {}, change.member),
            h(
              'dd',
              {},
              tool.kind === 'changed'
                ? h('pre', { class: 'approved', 'data-field': 'approved' }, shown(change.approved))
                : null,
              h('pre', { class: 'pulled', 'data-field': 'pulled' }, shown(change.pulled)),
            ),
          ]),
        ),
        actions === undefined
          ? null
          : h(
              'button',
              {
                type: 'button',
                onclick: () => actions.approve(sourceId, tool.name, tool.digest),
              },
              `Approve ${tool.name}`,
            ),
      ),
    ),
  );
}

const badge = (text: string, kind: string): HTMLElement =>
  h('span', { class: `badge badge-${kind.toLowerCase()}`, 'data-field': 'status' }, text);

/** A Tool Service bundle: one of the five states of contract §9. */
export function bundleCard(b: BundleView, actions?: CardActions): HTMLElement {
  return h(
    'article',
    { class: 'card', 'data-source': b.id, 'data-kind': 'bundle', 'aria-labelledby': `src-${b.id}` },
    h(
      'header',
      {},
      h('h3', { id: `src-${b.id}` }, b.id),
      h('span', { class: 'kind' }, 'Tool Service bundle'),
      badge(b.status, b.status),
    ),
    h(
      'dl',
      {},
      ...field('Era', 'bundle manifest'),
      ...field('Tools', b.toolCount, 'tools'),
      ...field('Revision', b.revision ?? '—'),
      ...field('Last success', when(b.lastSuccessAt)),
      ...field('Last error type', b.lastFailureReason ?? 'none', 'error'),
      ...(b.detail !== undefined ? field('Detail', b.detail) : []),
      ...field('Failures in a row', b.consecutiveFailures),
      ...field(
        'Copy in use',
        b.source === null ? 'none' : `${b.source}, ${age(b.ageSeconds)} old`,
        'age',
      ),
      ...(b.pinned === true ? field('Pinned', 'yes: tools served only as approved', 'pinned') : []),
    ),
    reviewSection(b.id, b.review, actions),
  );
}

/**
 * An upstream MCP server: the registration state (PENDING, ACTIVE, FAILED, DISABLED) when
 * /admin knows it, and the pull status of /actuator/upstreams (healthy, degraded,
 * unreachable, disabled).
 */
export function upstreamCard(
  id: string,
  pull: UpstreamView | undefined,
  record: UpstreamRecord | undefined,
  actions: CardActions | undefined,
): HTMLElement {
  // /actuator/upstreams says it too: the card is right without the admin token's records
  const origin = record?.origin ?? pull?.origin ?? 'config';
  const era = pull?.era ?? record?.era ?? null;
  const tools = pull?.counts.tools ?? record?.toolCount;
  const enabled = record?.enabled ?? pull?.status !== 'disabled';
  const controls =
    actions !== undefined && origin === 'registered'
      ? h(
          'div',
          { class: 'actions' },
          h(
            'button',
            { type: 'button', onclick: () => actions.setEnabled(id, !enabled) },
            enabled ? `Disable ${id}` : `Enable ${id}`,
          ),
          h(
            'button',
            { type: 'button', class: 'danger', onclick: () => actions.remove(id) },
            `Delete ${id}`,
          ),
        )
      : null;
  return h(
    'article',
    { class: 'card', 'data-source': id, 'data-kind': 'upstream', 'aria-labelledby': `src-${id}` },
    h(
      'header',
      {},
      h('h3', { id: `src-${id}` }, id),
      h(
        'span',
        { class: 'kind' },
        `upstream MCP server (${origin === 'config' ? 'configured, read-only' : 'registered'})`,
      ),
      record !== undefined
        ? h(
            'span',
            { class: `badge badge-${record.state.toLowerCase()}`, 'data-field': 'state' },
            record.state,
          )
        : null,
      pull !== undefined ? badge(pull.status, pull.status) : null,
    ),
    h(
      'dl',
      {},
      ...(record?.reason !== undefined ? field('Reason', record.reason, 'reason') : []),
      ...field('Era', era === null ? 'not known yet' : `MCP ${era}`, 'era'),
      ...field('Tools', tools ?? '—', 'tools'),
      ...(pull !== undefined
        ? [
            ...field(
              'Other lists',
              `${pull.counts.resources ?? 0} resources, ${pull.counts.resourceTemplates ?? 0} templates, ${pull.counts.prompts ?? 0} prompts`,
            ),
            ...field('Last success', when(pull.lastSuccessAt)),
            ...field('Last error type', pull.lastErrorType ?? 'none', 'error'),
            ...field(
              'Copy in use',
              pull.source === null ? 'none' : `${pull.source}, ${age(pull.ageSeconds)} old`,
              'age',
            ),
            ...(pull.leftOut.length > 0
              ? field(
                  'Left out',
                  pull.leftOut.map((i) => `${i.name ?? '?'}: ${i.reason ?? ''}`).join('; '),
                )
              : []),
            ...((pull.resourceConflicts?.length ?? 0) > 0
              ? field(
                  'Resources kept by another source',
                  (pull.resourceConflicts ?? [])
                    .map(
                      (c) =>
                        `${c.uri}: ${c.keptBy}${c.template === null ? ' lists it too' : ` serves it by ${c.template}`}`,
                    )
                    .join('; '),
                )
              : []),
            ...((pull.viewConflicts?.length ?? 0) > 0
              ? field(
                  'Tools left out for their view',
                  (pull.viewConflicts ?? [])
                    .map((v) => `${v.tool}: its view ${v.resourceUri} is served by ${v.servedBy}`)
                    .join('; '),
                )
              : []),
          ]
        : []),
      ...(record !== undefined ? field('URL', record.url) : []),
      ...(record?.createdBy !== undefined && record.origin === 'registered'
        ? field('Registered by', `${record.createdBy}, ${when(record.createdAt)}`)
        : []),
      ...(pull?.pinned === true
        ? field('Pinned', 'yes: tools served only as approved', 'pinned')
        : []),
    ),
    reviewSection(id, pull?.review, actions),
    controls,
  );
}
