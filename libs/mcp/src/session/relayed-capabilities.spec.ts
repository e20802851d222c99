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
