-- wrk script of the bench: every request carries a unique number, every response is checked.
--
-- BENCH_MODE (env):
--   rest  POST <url path> with {"nonce":N}            (direct Tool Service, bare proxy)
--   call  POST /mcp tools/call bench.echo, id N, arguments {"nonce":N}   (gateway)
--   list  POST /mcp tools/list, id N                   (gateway)
--   list-gzip  the same with Accept-Encoding: gzip; the answer must be gzip-encoded, and its id
--         is read from the envelope, which the gateway sends as stored (uncompressed) bytes
--   mcp   POST tools/call of BENCH_TOOL like call, to any MCP endpoint (an upstream MCP server
--         directly, through the bare proxy, or the gateway): the answer may be JSON or SSE
--         (`event: message` / `data: {...}`), and its members in any order, so the id is read
--         from `"jsonrpc":"2.0","id":N` anywhere in the body
--   modern-call  tools/call of BENCH_TOOL by a 2026-07-28 client: stateless, the `_meta` envelope
--         (protocolVersion, clientCapabilities, clientInfo) in params and the MCP-Protocol-Version,
--         Mcp-Method and Mcp-Name headers (wire notes §1.2, §2.0); checked like mcp
--   modern-list  tools/list by a 2026-07-28 client (envelope, MCP-Protocol-Version, Mcp-Method);
--         the id is read as in mcp
-- BENCH_HEADERS (env): extra request headers, one `name: value` per line (e.g. the
-- Mcp-Session-Id and MCP-Protocol-Version of a 2025 session opened by the bench).
-- A response is "matched" when the number it carries (the JSON-RPC id, and for a call also the
-- echoed nonce, which must equal the id) is one this thread sent and has not seen answered yet.
-- Anything else (unknown, repeated, id ~= nonce, unparseable) is a mismatch. A JSON-RPC error
-- or an isError result counts in rpcErrors. done() prints one line: BENCHJSON {...}.

local mode = os.getenv("BENCH_MODE") or "call"
local tool = os.getenv("BENCH_TOOL") or "bench.echo"
local threads = {}
-- the per-request envelope of a 2026-07-28 request (wire notes §2.0)
local envelope = '{"io.modelcontextprotocol/protocolVersion":"2026-07-28",' ..
  '"io.modelcontextprotocol/clientCapabilities":{},' ..
  '"io.modelcontextprotocol/clientInfo":{"name":"bench-wrk","version":"1"}}'

function setup(thread)
  thread:set("tid", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  counter = 0
  matched = 0
  mismatches = 0
  rpcErrors = 0
  outstandingCount = 0
  outstanding = {}
  base = tid * 100000000
  headers = {
    ["content-type"] = "application/json",
    ["accept"] = "application/json, text/event-stream",
  }
  if mode == "list-gzip" then headers["accept-encoding"] = "gzip" end
  if mode == "modern-call" or mode == "modern-list" then
    headers["mcp-protocol-version"] = "2026-07-28"
    headers["mcp-method"] = mode == "modern-call" and "tools/call" or "tools/list"
    if mode == "modern-call" then headers["mcp-name"] = tool end
  end
  for name, value in string.gmatch(os.getenv("BENCH_HEADERS") or "", "([^:\n]+):%s*([^\n]*)") do
    headers[name] = value
  end
end

function request()
  counter = counter + 1
  local n = base + counter
  local id = string.format("%d", n)
  outstanding[id] = true
  outstandingCount = outstandingCount + 1
  local body
  if mode == "rest" then
    body = '{"nonce":' .. id .. '}'
  elseif mode == "list" or mode == "list-gzip" then
    body = '{"jsonrpc":"2.0","id":' .. id .. ',"method":"tools/list"}'
  elseif mode == "modern-list" then
    body = '{"jsonrpc":"2.0","id":' .. id .. ',"method":"tools/list","params":{"_meta":' .. envelope .. '}}'
  elseif mode == "modern-call" then
    body = '{"jsonrpc":"2.0","id":' .. id .. ',"method":"tools/call","params":{"name":"' .. tool ..
      '","arguments":{"nonce":' .. id .. '},"_meta":' .. envelope .. '}}'
  else
    body = '{"jsonrpc":"2.0","id":' .. id .. ',"method":"tools/call","params":{"name":"' .. tool ..
      '","arguments":{"nonce":' .. id .. '}}}'
  end
  return wrk.format("POST", nil, headers, body)
end

local function settle(id)
  if id ~= nil and outstanding[id] then
    outstanding[id] = nil
    outstandingCount = outstandingCount - 1
    matched = matched + 1
  else
    mismatches = mismatches + 1
  end
end

function response(status, headers, body)
  if mode == "rest" then
    settle(string.match(body, '"nonce":(%d+)'))
    return
  end
  if mode == "list-gzip" then
    local encoding = headers["content-encoding"] or headers["Content-Encoding"]
    if encoding ~= "gzip" then rpcErrors = rpcErrors + 1 end
    settle(string.match(body, '{"jsonrpc":"2.0","id":(%d+),"result":'))
    return
  end
  local id
  local anywhere = mode == "mcp" or mode == "modern-call" or mode == "modern-list"
  if anywhere then
    id = string.match(body, '"jsonrpc":"2%.0","id":(%d+)')
  else
    id = string.match(body, '^{"jsonrpc":"2.0","id":(%d+)')
  end
  if mode == "call" or mode == "mcp" or mode == "modern-call" then
    local nonce = string.match(body, 'nonce%W+(%d+)')
    if nonce ~= id then
      mismatches = mismatches + 1
      return
    end
    if string.find(body, '"isError":true', 1, true) then rpcErrors = rpcErrors + 1 end
  end
  if not string.find(body, '"result":', 1, true) then rpcErrors = rpcErrors + 1 end
  settle(id)
end

function done(summary, latency, requests)
  local m, mm, re, oc = 0, 0, 0, 0
  for _, t in ipairs(threads) do
    m = m + t:get("matched")
    mm = mm + t:get("mismatches")
    re = re + t:get("rpcErrors")
    oc = oc + t:get("outstandingCount")
  end
  local e = summary.errors
  io.write(string.format(
    'BENCHJSON {"requests":%d,"durationUs":%d,"bytes":%d,"p50Us":%d,"p90Us":%d,"p99Us":%d,"maxUs":%d,"meanUs":%.1f,' ..
    '"errConnect":%d,"errRead":%d,"errWrite":%d,"errStatus":%d,"errTimeout":%d,' ..
    '"matched":%d,"mismatches":%d,"rpcErrors":%d,"unanswered":%d}\n',
    summary.requests, summary.duration, summary.bytes,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean,
    e.connect, e.read, e.write, e.status, e.timeout, m, mm, re, oc))
end
