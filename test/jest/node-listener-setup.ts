// The e2e-node-listener project (jest.config.js): the suites it lists run against the opt-in
// node:http /mcp listener (MCP_HTTP_SERVER=node, docs/operations.md) instead of the default one.
// Jest gives each test file its own copy of process.env, so the other projects never see this.
process.env.TEST_MCP_HTTP_SERVER = 'node';
