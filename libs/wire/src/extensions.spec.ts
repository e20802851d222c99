import { declaresExtension, Extension, isAppOnlyTool } from './extensions';

describe('extensions', () => {
  it('declaresExtension reads capabilities.extensions by identifier', () => {
    expect(declaresExtension({ extensions: { [Extension.ui]: {} } }, Extension.ui)).toBe(true);
    expect(declaresExtension({ extensions: { 'com.example/x': {} } }, Extension.ui)).toBe(false);
    expect(declaresExtension({ extensions: [Extension.ui] }, Extension.ui)).toBe(false);
    expect(declaresExtension({}, Extension.ui)).toBe(false);
    // settings are an object: the same rule as a 2025 session keeps (session-token.service.ts)
    expect(declaresExtension({ extensions: { [Extension.ui]: true } }, Extension.ui)).toBe(false);
    expect(declaresExtension({ extensions: { [Extension.ui]: null } }, Extension.ui)).toBe(false);
    expect(declaresExtension(undefined, Extension.ui)).toBe(false);
  });

  it('isAppOnlyTool: a visibility without "model" only', () => {
    const tool = (ui: unknown) => ({ name: 't', inputSchema: {}, _meta: { ui } });
    expect(isAppOnlyTool(tool({ resourceUri: 'ui://a', visibility: ['app'] }))).toBe(true);
    expect(isAppOnlyTool(tool({ visibility: [] }))).toBe(true);
    expect(isAppOnlyTool(tool({ resourceUri: 'ui://a', visibility: ['model', 'app'] }))).toBe(
      false,
    );
    expect(isAppOnlyTool(tool({ resourceUri: 'ui://a' }))).toBe(false);
    expect(isAppOnlyTool({ name: 't', inputSchema: {} })).toBe(false);
  });
});
