// The raw HTTP text of a 2026-07-28 `subscriptions/listen` request, for the bench scenarios that
// open listen streams on plain sockets (stalled streams, the capacity ramp).
const V2026 = '2026-07-28';

/**
 * `POST /mcp` with the 2026 envelope and headers, asking for `notifications` (the listen
 * filter); `extraHeaders` are added as they are (e.g. `{ Authorization: 'Bearer …' }`).
 */
export function listenRequest(port, id, notifications, clientName, extraHeaders = {}) {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'subscriptions/listen',
    params: {
      _meta: {
        'io.modelcontextprotocol/protocolVersion': V2026,
        'io.modelcontextprotocol/clientCapabilities': {},
        'io.modelcontextprotocol/clientInfo': { name: clientName, version: '1' },
      },
      notifications,
    },
  });
  const extra = Object.entries(extraHeaders)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return (
    `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
    `Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: ${V2026}\r\n` +
    `Mcp-Method: subscriptions/listen\r\n${extra}` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}
