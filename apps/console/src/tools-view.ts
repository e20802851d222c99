import type { CatalogToolView, CatalogToolsAnswer, VirtualServerView } from './api.js';
import { h, place, replace } from './dom.js';
import { McpCallError, type McpClient } from './mcp-client.js';
import { failureBlock, resultBlock } from './result-view.js';
import { argumentsForm } from './schema-form.js';
import { schemaBlock } from './schema-view.js';

function sourceLabel(tool: CatalogToolView): string {
  return tool.source.kind === 'bundle'
    ? `Tool Service bundle ${tool.source.id}`
    : `Upstream MCP server ${tool.source.id}`;
}

/**
 * The Tools view (docs/console.md "Tools"): cards grouped by source, a search box, "Schema"
 * unfolding the input and output schemas, and "Run" with a form generated from the inputSchema that
 * calls the tool through /mcp.
 */
export class ToolsView {
  private readonly search = h('input', {
    id: 'tool-search',
    type: 'search',
    autocomplete: 'off',
    'aria-controls': 'tool-groups',
  });
  private readonly count = h('p', { id: 'tool-count', role: 'status', 'aria-live': 'polite' });
  /** The virtual server whose view is shown and whose path Run uses (docs/operations.md §16). */
  private readonly serverPicker = h('select', { id: 'server-picker' });
  private readonly serverArea = h('div', { class: 'search', hidden: true });
  private servers: readonly VirtualServerView[] = [];
  private serversKey = '';
  private readonly groups = h('div', { id: 'tool-groups' });
  private publishedAt?: string | null;
  /** Names whose schema panel is open, kept across a catalog change. */
  private readonly openSchemas = new Set<string>();
  /**
   * The card of each tool shown, by its whole view (name, definition, source): a publication
   * keeps the card of a tool it did not change, with its open panels, typed arguments, result
   * and focus (docs/console.md: the page refreshes itself), and builds one for a changed tool.
   */
  private cards = new Map<string, HTMLElement>();
  /** The section of each source shown, by `kind:id`, with its count line. */
  private sections = new Map<
    string,
    { section: HTMLElement; count: HTMLElement; cards: HTMLElement }
  >();
  /** Numbers the ids of new cards and sections: a kept one keeps its ids, so none repeat. */
  private nextId = 0;

  /**
   * @param credential the "Caller token for Run" form (caller-token-view.ts)
   * @param onServer told the picked virtual server (undefined: the whole catalog on /mcp)
   */
  constructor(
    root: HTMLElement,
    private readonly client: () => McpClient | undefined,
    credential: HTMLElement,
    private readonly onServer: (server: string | undefined) => void,
  ) {
    this.search.addEventListener('input', () => this.filter());
    this.serverPicker.addEventListener('change', () => {
      this.onServer(this.picked());
      this.filter();
    });
    replace(
      this.serverArea,
      h('label', { for: 'server-picker' }, 'Virtual server'),
      this.serverPicker,
    );
    root.append(
      h('h2', {}, 'Tools'),
      credential,
      this.serverArea,
      h(
        'div',
        { class: 'search' },
        h('label', { for: 'tool-search' }, 'Search tools'),
        this.search,
      ),
      this.count,
      this.groups,
    );
  }

  /** The virtual servers to pick from; the picker shows only when there is one. */
  renderServers(servers: readonly VirtualServerView[]): void {
    this.servers = servers;
    const key = servers.map((s) => `${s.id}:${s.title}`).join('|');
    if (key !== this.serversKey) {
      this.serversKey = key;
      const picked = this.picked();
      replace(
        this.serverPicker,
        h('option', { value: '' }, 'All tools (/mcp)'),
        ...servers.map((s) =>
          h('option', { value: s.id, selected: s.id === picked }, `${s.title} (${s.path})`),
        ),
      );
      this.serverArea.hidden = servers.length === 0;
      if (picked !== undefined && !servers.some((s) => s.id === picked)) this.onServer(undefined);
    }
    this.filter();
  }

  private picked(): string | undefined {
    return this.serverPicker.value === '' ? undefined : this.serverPicker.value;
  }

  /**
   * Shows another published catalog (nothing to do for the same one): the cards of unchanged
   * tools stay as they are, in the catalog's order.
   */
  render(answer: CatalogToolsAnswer): void {
    if (answer.publishedAt === this.publishedAt) return;
    this.publishedAt = answer.publishedAt;
    const bySource = new Map<string, CatalogToolView[]>();
    for (const tool of answer.tools) {
      const key = `${tool.source.kind}:${tool.source.id}`;
      bySource.set(key, [...(bySource.get(key) ?? []), tool]);
    }
    const cards = new Map<string, HTMLElement>();
    const sections = new Map<
      string,
      { section: HTMLElement; count: HTMLElement; cards: HTMLElement }
    >();
    for (const [key, tools] of bySource) {
      const group = this.sections.get(key) ?? this.section(tools[0] as CatalogToolView);
      group.count.textContent = ` (${tools.length})`;
      place(
        group.cards,
        tools.map((tool) => {
          const view = JSON.stringify(tool);
          const card = this.cards.get(view) ?? this.card(tool, `tool-${this.nextId++}`);
          cards.set(view, card);
          return card;
        }),
      );
      sections.set(key, group);
    }
    this.cards = cards;
    this.sections = sections;
    place(this.groups, [
      ...[...sections.values()].map((s) => s.section),
      ...(answer.tools.length === 0
        ? [
            h(
              'p',
              {},
              answer.publishedAt === null
                ? 'No catalog is published yet.'
                : 'The catalog is empty.',
            ),
          ]
        : []),
    ]);
    this.filter();
  }

  /** The (empty) section of a source's cards. */
  private section(first: CatalogToolView): {
    section: HTMLElement;
    count: HTMLElement;
    cards: HTMLElement;
  } {
    const id = `group-${this.nextId++}`;
    const count = h('span', { class: 'hint' });
    const cards = h('div', { class: 'cards' });
    const section = h(
      'section',
      { class: 'tool-group', 'aria-labelledby': id, 'data-group': sourceLabel(first) },
      h('h3', { id }, sourceLabel(first), count),
      cards,
    );
    return { section, count, cards };
  }

  private filter(): void {
    const q = this.search.value.trim().toLowerCase();
    const server = this.servers.find((s) => s.id === this.picked());
    const inView = server === undefined ? undefined : new Set(server.toolNames);
    let shown = 0;
    let total = 0;
    for (const group of Array.from(this.groups.querySelectorAll<HTMLElement>('.tool-group'))) {
      let inGroup = 0;
      for (const card of Array.from(group.querySelectorAll<HTMLElement>('.tool'))) {
        if (inView !== undefined && !inView.has(card.dataset.tool ?? '')) {
          card.hidden = true;
          continue;
        }
        total++;
        const match = q === '' || (card.dataset.search ?? '').includes(q);
        card.hidden = !match;
        if (match) inGroup++;
      }
      group.hidden = inGroup === 0;
      shown += inGroup;
    }
    this.count.textContent =
      q === '' ? `${total} tools` : `${shown} of ${total} tools match “${q}”`;
  }

  private card(tool: CatalogToolView, id: string): HTMLElement {
    const schemaPanel = h('div', { id: `${id}-schema`, class: 'panel', hidden: true });
    const runPanel = h('div', { id: `${id}-run`, class: 'panel', hidden: true });
    const schemaButton = h(
      'button',
      { type: 'button', 'aria-expanded': 'false', 'aria-controls': schemaPanel.id },
      'Schema',
    );
    const runButton = h(
      'button',
      { type: 'button', 'aria-expanded': 'false', 'aria-controls': runPanel.id },
      'Run',
    );
    const toggle = (button: HTMLButtonElement, panel: HTMLElement, fill: () => void): void => {
      const open = panel.hidden;
      if (open && panel.childElementCount === 0) fill();
      panel.hidden = !open;
      button.setAttribute('aria-expanded', String(open));
    };
    const fillSchema = (): void =>
      replace(
        schemaPanel,
        schemaBlock('inputSchema', tool.inputSchema, `${id}-in`),
        tool.outputSchema !== undefined
          ? schemaBlock('outputSchema', tool.outputSchema, `${id}-out`)
          : h('p', { class: 'hint' }, 'No outputSchema: the result is unstructured content.'),
      );
    schemaButton.addEventListener('click', () => {
      toggle(schemaButton, schemaPanel, fillSchema);
      if (schemaPanel.hidden) this.openSchemas.delete(tool.name);
      else this.openSchemas.add(tool.name);
    });
    runButton.addEventListener('click', () =>
      toggle(runButton, runPanel, () => this.fillRun(tool, id, runPanel)),
    );
    if (this.openSchemas.has(tool.name)) toggle(schemaButton, schemaPanel, fillSchema);
    const text = [tool.name, tool.title, tool.description, tool.source.id]
      .filter(Boolean)
      .join(' ')
      .toLowerCase();
    return h(
      'article',
      {
        class: 'card tool',
        'data-tool': tool.name,
        'data-search': text,
        'aria-labelledby': `${id}-name`,
      },
      h('header', {}, h('h4', { id: `${id}-name` }, h('code', {}, tool.name))),
      tool.title !== undefined ? h('p', { class: 'title' }, tool.title) : null,
      tool.description !== undefined ? h('p', { class: 'description' }, tool.description) : null,
      h('div', { class: 'actions' }, schemaButton, runButton),
      schemaPanel,
      runPanel,
    );
  }

  private fillRun(tool: CatalogToolView, id: string, panel: HTMLElement): void {
    const form = argumentsForm(tool.inputSchema, id);
    const output = h('div', { 'aria-live': 'polite' });
    const submit = h('button', { type: 'submit' }, `Run ${tool.name}`);
    const element = h(
      'form',
      { class: 'run', novalidate: true, 'aria-label': `Run ${tool.name}` },
      form.element,
      submit,
      output,
    );
    element.addEventListener('submit', (event) => {
      event.preventDefault();
      const read = form.read();
      if (!read.ok) {
        replace(output, failureBlock(`Not sent: ${read.error}.`));
        return;
      }
      const client = this.client();
      if (client === undefined) {
        replace(output, failureBlock('The /mcp URL is not known yet.'));
        return;
      }
      submit.disabled = true;
      replace(output, h('p', {}, 'Calling through /mcp…'));
      const started = performance.now();
      client
        .callTool(tool.name, read.args)
        .then((result) => replace(output, resultBlock(result, performance.now() - started)))
        .catch((err: unknown) =>
          replace(
            output,
            failureBlock(
              err instanceof McpCallError || err instanceof Error ? err.message : String(err),
            ),
          ),
        )
        .finally(() => {
          submit.disabled = false;
        });
    });
    replace(panel, element);
  }
}
