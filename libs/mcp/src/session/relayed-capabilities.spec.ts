import { relayedCapabilities } from './session-token.service';

describe('relayedCapabilities (what a sealed session id keeps of initialize)', () => {
  it('keeps sampling, elicitation and roots, and the extensions by identifier', () => {
    expect(
      relayedCapabilities({
        sampling: {},
        elicitation: { form: {}, url: {} },
        roots: { listChanged: true },
        experimental: { x: {} },
        extensions: {
          'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] },
        },
      }),
    ).toEqual({
      sampling: {},
      elicitation: { form: {}, url: {} },
      roots: { listChanged: true },
      extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } },
    });
  });

  it('bounds the extensions: eight identifiers, long settings as {}, long identifiers and non-objects dropped', () => {
    const many = Object.fromEntries(
      Array.from({ length: 12 }, (_, i) => [`com.example/e${i}`, { i }]),
    );
    const kept = relayedCapabilities({ extensions: many }).extensions as Record<string, unknown>;
    expect(Object.keys(kept)).toHaveLength(8);
    expect(
      relayedCapabilities({
        extensions: {
          'com.example/long': { text: 'x'.repeat(200) },
          ['x'.repeat(129)]: {},
          'com.example/flag': true,
        },
      }),
    ).toEqual({ extensions: { 'com.example/long': {} } });
  });
});

describe('relayedCapabilities keeps the MCP Apps extension whatever its place', () => {
  it('keeps io.modelcontextprotocol/ui past eight others', () => {
    const others = Object.fromEntries(
      Array.from({ length: 10 }, (_, i) => [`com.example/e${i}`, {}]),
    );
    const kept = relayedCapabilities({
      extensions: {
        ...others,
        'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] },
      },
    }).extensions as Record<string, unknown>;
    expect(Object.keys(kept)).toHaveLength(8);
    expect(kept['io.modelcontextprotocol/ui']).toEqual({
      mimeTypes: ['text/html;profile=mcp-app'],
    });
  });
});
