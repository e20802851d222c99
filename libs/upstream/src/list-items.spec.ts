import { ListItemCounter, listItemsExceed } from './list-items';

const tools = (n: number): unknown[] =>
  Array.from({ length: n }, (_, i) => ({
    name: `t${i}`,
    description: 'a, b [c] {d} "e"',
    inputSchema: { type: 'object', properties: { a: { enum: [1, 2, 3] } } },
  }));

const message = (result: unknown, resultFirst = false): string =>
  resultFirst
    ? JSON.stringify({ result, jsonrpc: '2.0', id: 1 })
    : JSON.stringify({ jsonrpc: '2.0', id: 1, result });

describe('listItemsExceed: counts result.<key> items without parsing the answer', () => {
  it.each([0, 1, 5, 100])(
    'a list of %i items exceeds a limit one below it, not its own size',
    (n) => {
      for (const resultFirst of [false, true]) {
        const text = message({ tools: tools(n), nextCursor: 'x' }, resultFirst);
        expect(listItemsExceed(text, 'tools', n)).toBe(false);
        if (n > 0) expect(listItemsExceed(text, 'tools', n - 1)).toBe(true);
      }
    },
  );

  it('counts scalars and nested arrays as single items, whitespace and all', () => {
    const text = `{ "jsonrpc" : "2.0" , "id" : 1 , "result" : { "tools" : [ 1 , [2, 3] , "x,y" , {"a":[4,5]} ] } }`;
    expect(listItemsExceed(text, 'tools', 4)).toBe(false);
    expect(listItemsExceed(text, 'tools', 3)).toBe(true);
    expect(listItemsExceed('{"result":{"tools":[ ]}}', 'tools', 0)).toBe(false);
  });

  it('only result.<key> counts: the same key elsewhere, deeper or in params does not', () => {
    const many = tools(10);
    const text = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      params: { tools: many },
      result: { _meta: { tools: many }, prompts: many, tools: [] },
    });
    expect(listItemsExceed(text, 'tools', 0)).toBe(false);
    expect(listItemsExceed(text, 'prompts', 9)).toBe(true);
  });

  it('an escaped key is the same key, and a repeated key cannot hide a long list', () => {
    expect(listItemsExceed('{"result":{"\\u0074ools":[1,2,3]}}', 'tools', 2)).toBe(true);
    expect(listItemsExceed('{"result":{"tools":[1,2,3],"tools":[]}}', 'tools', 2)).toBe(true);
    expect(listItemsExceed('{"result":{"to\\"ols":[1,2,3]}}', 'tools', 2)).toBe(false);
  });

  it('strings with escaped quotes and backslashes do not end early', () => {
    const text = message({ tools: ['a\\', 'b\\"]', '\\\\"', 'c'] });
    expect(listItemsExceed(text, 'tools', 4)).toBe(false);
    expect(listItemsExceed(text, 'tools', 3)).toBe(true);
  });

  it('text that is not JSON is left to the parser', () => {
    expect(listItemsExceed('{"result":{"tools":["open', 'tools', 0)).toBe(false);
    expect(listItemsExceed('{"result":{"tools', 'tools', 0)).toBe(false);
    expect(listItemsExceed('not json', 'tools', 0)).toBe(false);
  });

  it('stops at the limit: a 40,000-item list is refused after a few of its items', () => {
    const text = message({ tools: tools(40_000) });
    expect(listItemsExceed(text, 'tools', 100)).toBe(true);
    expect(listItemsExceed(text, 'tools', 40_000)).toBe(false);
  });
});

describe('ListItemCounter: the same count over bytes as they arrive', () => {
  const feed = (text: string, limit: number, size: number): boolean => {
    const counter = new ListItemCounter('tools', limit);
    const bytes = Buffer.from(text, 'utf8');
    for (let at = 0; at < bytes.length; at += size)
      if (counter.exceeds(bytes.subarray(at, at + size))) return true;
    return false;
  };

  it.each([1, 3, 64])('agrees with listItemsExceed in chunks of %i bytes', (size) => {
    const texts = [
      message({ tools: tools(5), nextCursor: 'x' }),
      message({ tools: tools(5) }, true),
      JSON.stringify({ jsonrpc: '2.0', id: 1, result: { _meta: { tools: tools(9) }, tools: [] } }),
      `{ "result" : { "tools" : [ 1 , [2, 3] , "x,y" , {"a":[4,5]}, "é\\"]" ] } }`,
    ];
    for (const text of texts)
      for (const limit of [0, 3, 4, 5, 9])
        expect([text.slice(0, 40), limit, feed(text, limit, size)]).toEqual([
          text.slice(0, 40),
          limit,
          listItemsExceed(text, 'tools', limit),
        ]);
  });

  it('reads an SSE stream: a notification event first, then the response', () => {
    const text =
      `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"tools":[1,2,3]}}\n\n` +
      `event: message\nid: 7\ndata: ${message({ tools: tools(3) })}\n\n`;
    expect(feed(text, 3, 7)).toBe(false);
    expect(feed(text, 2, 7)).toBe(true);
  });
});
