import {
  filterAccepts,
  filterWatches,
  honoredFilter,
  isEmptyFilter,
  parseListenFilter,
} from './listen-filter';

describe('subscriptions/listen filter (wire notes §2.8)', () => {
  it('is required: absent or not an object is a problem (-32602 in-band)', () => {
    expect(parseListenFilter(undefined)).toHaveProperty('problem');
    expect(parseListenFilter({})).toHaveProperty('problem');
    expect(parseListenFilter({ notifications: [] })).toHaveProperty('problem');
    expect(parseListenFilter({ notifications: 'all' })).toHaveProperty('problem');
  });

  it('takes booleans for the list keys, drops false and unknown keys', () => {
    expect(
      parseListenFilter({
        notifications: { toolsListChanged: true, promptsListChanged: false, bogus: true },
      }),
    ).toEqual({ filter: { toolsListChanged: true } });
    expect(parseListenFilter({ notifications: { toolsListChanged: 'yes' } })).toHaveProperty(
      'problem',
    );
  });

  it('takes resourceSubscriptions as a list of URI strings, without duplicates', () => {
    expect(
      parseListenFilter({ notifications: { resourceSubscriptions: ['a://1', 'a://1', 'b://2'] } }),
    ).toEqual({ filter: { resourceSubscriptions: ['a://1', 'b://2'] } });
    expect(parseListenFilter({ notifications: { resourceSubscriptions: [1] } })).toHaveProperty(
      'problem',
    );
    expect(parseListenFilter({ notifications: { resourceSubscriptions: [''] } })).toHaveProperty(
      'problem',
    );
    expect(parseListenFilter({ notifications: { resourceSubscriptions: [] } })).toEqual({
      filter: {},
    });
  });

  it('honours a list only when the gateway advertises it, a URI only when its owner can deliver updates', () => {
    const honored = honoredFilter(
      {
        toolsListChanged: true,
        promptsListChanged: true,
        resourcesListChanged: true,
        resourceSubscriptions: ['ok://1', 'no://2'],
      },
      { tools: { listChanged: true }, resources: { listChanged: true } },
      (uri) => uri.startsWith('ok:'),
    );
    expect(honored).toEqual({
      toolsListChanged: true,
      resourcesListChanged: true,
      resourceSubscriptions: ['ok://1'],
    });
    expect(isEmptyFilter(honored)).toBe(false);
    expect(isEmptyFilter(honoredFilter({ promptsListChanged: true }, {}, () => true))).toBe(true);
  });

  it('lets through only the change notifications asked for; never progress or log messages', () => {
    const filter = { toolsListChanged: true, resourceSubscriptions: ['a://1'] } as const;
    expect(filterAccepts(filter, 'notifications/tools/list_changed')).toBe(true);
    expect(filterAccepts(filter, 'notifications/prompts/list_changed')).toBe(false);
    expect(filterAccepts(filter, 'notifications/resources/updated', 'a://1')).toBe(true);
    expect(filterAccepts(filter, 'notifications/resources/updated', 'a://2')).toBe(false);
    expect(filterAccepts(filter, 'notifications/progress')).toBe(false);
    expect(filterAccepts(filter, 'notifications/message')).toBe(false);
  });

  it('task ids (the Tasks extension): a bounded list of strings, honoured when they may be watched', () => {
    expect(parseListenFilter({ notifications: { taskIds: ['a', 'a', 'b'] } })).toEqual({
      filter: { taskIds: ['a', 'b'] },
    });
    for (const taskIds of ['a', [1], [''], Array.from({ length: 65 }, (_, i) => `t${i}`)])
      expect(parseListenFilter({ notifications: { taskIds } })).toHaveProperty('problem');
    const honored = honoredFilter(
      { taskIds: ['a', 'b'] },
      {},
      () => true,
      (t) => t === 'b',
    );
    expect(honored).toEqual({ taskIds: ['b'] });
    expect(honoredFilter({ taskIds: ['a'] }, {}, () => true)).toEqual({});
    expect(filterWatches(honored, 'b')).toBe(true);
    expect(filterWatches(honored, 'a')).toBe(false);
    expect(filterAccepts(honored, 'notifications/tasks')).toBe(false);
  });
});
