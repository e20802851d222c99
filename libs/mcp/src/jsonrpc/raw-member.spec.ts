import { extractRawMember, objectMembers, withMembers } from './raw-member';

const ARGS = ['params', 'arguments'] as const;

/** The body of a tools/call whose params.arguments is written as `raw`. */
function call(raw: string): string {
  return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"r.a","arguments":${raw}}}`;
}

describe('extractRawMember: the exact source text of params.arguments (contract §10)', () => {
  it('returns the exact slice of a simple object', () => {
    expect(extractRawMember(call('{"q":"x"}'), ARGS)).toBe('{"q":"x"}');
  });

  it('keeps nested objects, arrays and strings holding braces, brackets, commas and quotes', () => {
    const raw = String.raw`{"a":{"b":[1,{"c":"}]},{["}]},"d":"he said \"}\"","e":[[],{}],"f":"\\"}`;
    const text = call(raw);
    expect(JSON.parse(text)).toBeTruthy();
    expect(extractRawMember(text, ARGS)).toBe(raw);
  });

  it('returns the value without the whitespace around it, and keeps the whitespace inside', () => {
    const raw = '{ "q" :\n\t"a  b" ,  "n" : [ 1 , 2 ] }';
    const text = `{ "params" : {\n  "arguments" :  \r\n ${raw} \n , "name" : "r.a" } }`;
    expect(extractRawMember(text, ARGS)).toBe(raw);
  });

  it('keeps big integers, number spellings and escapes as the agent wrote them', () => {
    const raw = String.raw`{"id":12345678901234567890,"f":1.0,"e":1E+3,"s":"caf\u00e9\/\n"}`;
    expect(extractRawMember(call(raw), ARGS)).toBe(raw);
    expect(JSON.stringify(JSON.parse(raw))).not.toBe(raw);
  });

  it('takes the last of duplicate keys, like JSON.parse', () => {
    const text = '{"params":{"arguments":{"v":1},"name":"r.a","arguments":{"v":2}}}';
    expect(extractRawMember(text, ARGS)).toBe('{"v":2}');
    expect(JSON.parse(text).params.arguments).toEqual({ v: 2 });
  });

  it('takes the last of duplicate parent keys too', () => {
    const text = '{"params":{"arguments":{"v":1}},"id":1,"params":{"arguments":{"v":2}}}';
    expect(extractRawMember(text, ARGS)).toBe('{"v":2}');
  });

  it('finds keys written with escapes (\\u0061rguments)', () => {
    const text = String.raw`{"\u0070arams":{"name":"r.a","\u0061rguments":{"k":1}}}`;
    expect(JSON.parse(text).params.arguments).toEqual({ k: 1 });
    expect(extractRawMember(text, ARGS)).toBe('{"k":1}');
  });

  it('does not match a key that only looks similar once escapes are read', () => {
    const text = String.raw`{"params":{"argument\u0073X":{"k":1},"arguments\"":{"k":2}}}`;
    expect(extractRawMember(text, ARGS)).toBeUndefined();
  });

  it('finds arguments when it is not the first key', () => {
    const text =
      '{"id":1,"params":{"name":"r.a","_meta":{"progressToken":"t","arguments":{"fake":1}},"arguments":{"real":1}},"jsonrpc":"2.0","method":"tools/call"}';
    expect(extractRawMember(text, ARGS)).toBe('{"real":1}');
  });

  it('does not look inside arrays or nested objects of other members', () => {
    const text = '{"params":{"list":[{"arguments":{"fake":1}}],"x":{"arguments":2}}}';
    expect(extractRawMember(text, ARGS)).toBeUndefined();
  });

  it('returns scalar values as written', () => {
    for (const raw of [
      'null',
      'true',
      'false',
      '-12.50e-3',
      '"a \\"b\\" c"',
      '12345678901234567890',
    ]) {
      expect(extractRawMember(call(raw), ARGS)).toBe(raw);
    }
  });

  it('returns an empty object or array as written', () => {
    expect(extractRawMember(call('{ }'), ARGS)).toBe('{ }');
    expect(extractRawMember(call('[]'), ARGS)).toBe('[]');
  });

  it('returns undefined when the path is absent', () => {
    expect(extractRawMember('{"params":{"name":"r.a"}}', ARGS)).toBeUndefined();
    expect(extractRawMember('{"id":1}', ARGS)).toBeUndefined();
    expect(extractRawMember('{}', ARGS)).toBeUndefined();
  });

  it('returns undefined when a parent on the path is not an object', () => {
    expect(extractRawMember('{"params":[{"arguments":1}]}', ARGS)).toBeUndefined();
    expect(extractRawMember('{"params":"{\\"arguments\\":1}"}', ARGS)).toBeUndefined();
    expect(extractRawMember('{"params":null}', ARGS)).toBeUndefined();
    expect(extractRawMember('[{"params":{"arguments":1}}]', ARGS)).toBeUndefined();
  });

  it('returns the whole text for the empty path', () => {
    expect(extractRawMember('{"a":1}', [])).toBe('{"a":1}');
  });

  it('agrees with JSON.parse on every top-level member of varied documents', () => {
    const documents = [
      '{"a":1,"b":[1,2,{"c":"]"}],"c":{"d":{"e":"}"}},"d":"\\\\","e":-0,"f":1e-7}',
      '{ "s" : "\\"" , "t" : [ "[" , "{" ] , "u" : { } , "v" : null }',
      '{"k\\n":"line","k":"plain","\\"q\\"":true,"x":[[[[]]]],"y":"\\u2028"}',
    ];
    for (const text of documents) {
      const parsed = JSON.parse(text) as Record<string, unknown>;
      for (const key of Object.keys(parsed)) {
        const raw = extractRawMember(text, [key]);
        expect(raw).toBeDefined();
        expect(JSON.parse(raw!)).toEqual(parsed[key]);
      }
    }
  });

  it('agrees with JSON.parse on generated documents with quotes, backslashes and brackets in strings', () => {
    let seed = 7;
    // mulberry32: a small seeded generator, so a failure repeats
    const next = (n: number): number => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
    };
    const pieces = ['a', '"', '\\', '{', '}', '[', ']', ',', ':', ' ', 'é', '\u2028'];
    const text = (): string =>
      Array.from({ length: next(8) }, () => pieces[next(pieces.length)]).join('');
    const value = (depth: number): unknown => {
      switch (depth > 3 ? next(3) : next(6)) {
        case 0:
          return text();
        case 1:
          return next(1000) - 500;
        case 2:
          return next(2) === 0 ? null : true;
        case 3:
          return Array.from({ length: next(4) }, () => value(depth + 1));
        default:
          return Object.fromEntries(
            Array.from({ length: next(4) }, () => [text(), value(depth + 1)]),
          );
      }
    };
    for (let n = 0; n < 300; n++) {
      const doc = { [text()]: value(0), params: { _meta: value(0), arguments: value(0) } };
      for (const json of [JSON.stringify(doc), JSON.stringify(doc, null, n % 3)]) {
        const parsed = JSON.parse(json) as Record<string, unknown>;
        for (const key of Object.keys(parsed)) {
          expect(JSON.parse(extractRawMember(json, [key])!)).toEqual(parsed[key]);
        }
        expect(JSON.parse(extractRawMember(json, ARGS)!)).toEqual(doc.params.arguments);
      }
    }
  });

  it('finds params.arguments of a 2026 request before its _meta envelope', () => {
    const meta =
      '{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},' +
      '"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}';
    const text = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"r.a","arguments":{"n":7},"_meta":${meta}}}`;
    expect(extractRawMember(text, ARGS)).toBe('{"n":7}');
  });

  it('still takes the last duplicate when its name is escaped, or when the name occurs again elsewhere', () => {
    const escaped = String.raw`{"params":{"arguments":{"v":1},"_meta":{},"\u0061rguments":{"v":2}}}`;
    expect(JSON.parse(escaped).params.arguments).toEqual({ v: 2 });
    expect(extractRawMember(escaped, ARGS)).toBe('{"v":2}');
    const mentioned =
      '{"params":{"arguments":{"v":1},"_meta":{"note":"arguments"},"arguments":{"v":3}}}';
    expect(extractRawMember(mentioned, ARGS)).toBe('{"v":3}');
    // the name as a value only: the first member is the one JSON.parse keeps
    const valueOnly = '{"params":{"arguments":{"v":1},"_meta":{"k":"arguments"}}}';
    expect(extractRawMember(valueOnly, ARGS)).toBe('{"v":1}');
  });
});

describe('objectMembers: the members of an object text with their ranges', () => {
  it('lists every member in order, duplicates included, with its value range', () => {
    const text = String.raw` { "a" : [1, {"}":"]"}] , "\u0062":"x\"y","a":null } `;
    const members = objectMembers(text) ?? [];
    expect(members.map((m) => m.name)).toEqual(['a', 'b', 'a']);
    expect(members.map((m) => text.slice(m.valueStart, m.end))).toEqual([
      '[1, {"}":"]"}]',
      String.raw`"x\"y"`,
      'null',
    ]);
    expect(members.map((m) => text.slice(m.start, m.end))).toEqual([
      '"a" : [1, {"}":"]"}]',
      String.raw`"\u0062":"x\"y"`,
      '"a":null',
    ]);
  });

  it('is empty for an empty object and undefined for anything else', () => {
    expect(objectMembers(' {} ')).toEqual([]);
    expect(objectMembers('[1]')).toBeUndefined();
    expect(objectMembers('"x"')).toBeUndefined();
  });
});

describe('withMembers: members set in an object text, the rest as written', () => {
  const set = (json: string, updates: Record<string, string>) =>
    withMembers(json, new Map(Object.entries(updates)));

  it('replaces a member in its place and appends a missing one, as {...value, ...updates}', () => {
    const json = '{"a":1.0,"b" : [1, 2],"c":"x"}';
    const out = set(json, { b: '"new"', d: '{"e":12345678901234567890}' });
    expect(out).toBe('{"a":1.0,"b" : "new","c":"x","d":{"e":12345678901234567890}}');
    expect(Object.keys(JSON.parse(out ?? '{}') as object)).toEqual(
      Object.keys({ ...(JSON.parse(json) as object), b: 0, d: 0 }),
    );
  });

  it('sets members of an empty object', () => {
    expect(set('{}', { a: '1' })).toBe('{"a":1}');
  });

  it('gives up on a name written twice, or a text that is no object', () => {
    expect(set('{"a":1,"a":2}', { b: '1' })).toBeUndefined();
    expect(set('[1]', { b: '1' })).toBeUndefined();
  });
});
