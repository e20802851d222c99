// A task-capable upstream MCP server for tests and the conformance run through the gateway:
// stateless 2026-07-28 on raw node:http, with the Tasks extension (SEP-2663,
// io.modelcontextprotocol/tasks) and the fixture tools the conformance suite's `tasks-*`
// scenarios name (greet, slow_compute, failing_job, protocol_error_job, confirm_delete,
// multi_input, test_tool_with_task). No official SDK serves 2026-07-28 tasks yet
// (../shared/conformance-2026/README.md), so this one is written to the suite's scenario texts.
// Task shapes are checked against @modelcontextprotocol/ext-tasks' v2 schemas in the e2e test.
//
//   node test/support/tasks-upstream.mjs [--port N]   (N = 0: a free port)
//
// prints `tasks upstream listening on http://127.0.0.1:<port>/mcp` when ready; SIGTERM stops it.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';

const MODERN = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';
const META_VERSION = 'io.modelcontextprotocol/protocolVersion';
const META_CAPS = 'io.modelcontextprotocol/clientCapabilities';
const TTL_MS = 60_000;
const POLL_MS = 200;
const NAMED = new Map([
  ['tools/call', 'name'],
  ['tasks/get', 'taskId'],
  ['tasks/update', 'taskId'],
  ['tasks/cancel', 'taskId'],
]);

const text = (t) => ({ content: [{ type: 'text', text: t }] });
const schema = (properties = {}) => ({ type: 'object', properties });
const TOOLS = [
  {
    name: 'greet',
    description: 'Says hello (synchronous)',
    inputSchema: schema({ name: { type: 'string' } }),
  },
  {
    name: 'slow_compute',
    description: 'Sleeps `seconds` then answers; a task when the client allows',
    inputSchema: schema({ seconds: { type: 'number' }, label: { type: 'string' } }),
  },
  { name: 'failing_job', description: 'Task only; ends with a tool error', inputSchema: schema() },
  {
    name: 'protocol_error_job',
    description: 'Task; fails with a protocol error',
    inputSchema: schema(),
  },
  {
    name: 'confirm_delete',
    description: 'Task; asks for a confirmation',
    inputSchema: schema({ filename: { type: 'string' } }),
  },
  { name: 'multi_input', description: 'Task; asks two questions at once', inputSchema: schema() },
  {
    name: 'test_tool_with_task',
    description: 'Asks a name (input_required), then runs as a task',
    inputSchema: schema(),
  },
];

/** taskId → { status, createdAt, lastUpdatedAt, result?, error?, inputRequests?, timer?, onInput? } */
const tasks = new Map();
/** Every tools/call and tasks/* request received, for tests: { method, taskId?, name?, declared } */
const received = [];

const now = () => new Date().toISOString();

function createTask() {
  const taskId = randomUUID();
  const task = { taskId, status: 'working', createdAt: now(), lastUpdatedAt: now() };
  tasks.set(taskId, task);
  return task;
}

function settle(task, change) {
  if (['completed', 'failed', 'cancelled'].includes(task.status)) return;
  clearTimeout(task.timer);
  Object.assign(task, change, { lastUpdatedAt: now() });
  if (task.status !== 'input_required') delete task.inputRequests;
}

function created(task) {
  return {
    resultType: 'task',
    taskId: task.taskId,
    status: task.status,
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttlMs: TTL_MS,
    pollIntervalMs: POLL_MS,
  };
}

function detailed(task) {
  const out = { ...created(task), resultType: 'complete' };
  if (task.result !== undefined) out.result = { ...task.result, resultType: 'complete' };
  if (task.error !== undefined) out.error = task.error;
  if (task.inputRequests !== undefined) out.inputRequests = task.inputRequests;
  return out;
}

const elicit = (message, properties) => ({
  method: 'elicitation/create',
  params: { mode: 'form', message, requestedSchema: schema(properties) },
});

function missingTasks() {
  return {
    code: -32021,
    message: `Missing required client capability: extensions.${TASKS}`,
    data: { requiredCapabilities: { extensions: { [TASKS]: {} } } },
  };
}

/** tools/call: a result, an error, or a CreateTaskResult (when the request declared the extension). */
async function callTool(params, declared) {
  const args = params.arguments ?? {};
  switch (params.name) {
    case 'greet':
      return { result: text(`Hello, ${args.name ?? 'World'}!`) };
    case 'slow_compute': {
      const ms = Math.max(0, Number(args.seconds ?? 0)) * 1000;
      const answer = text(`computed ${args.label ?? ''} after ${ms} ms`);
      if (!declared) {
        await new Promise((r) => setTimeout(r, Math.min(ms, 2000)));
        return { result: answer };
      }
      const task = createTask();
      task.timer = setTimeout(() => settle(task, { status: 'completed', result: answer }), ms);
      return { result: created(task) };
    }
    case 'failing_job': {
      if (!declared) return { error: missingTasks() };
      const task = createTask();
      task.timer = setTimeout(
        () =>
          settle(task, {
            status: 'completed',
            result: { ...text('the job failed'), isError: true },
          }),
        1000,
      );
      return { result: created(task) };
    }
    case 'protocol_error_job': {
      if (!declared) return { error: { code: -32603, message: 'Internal error: the job crashed' } };
      const task = createTask();
      task.timer = setTimeout(
        () =>
          settle(task, {
            status: 'failed',
            error: { code: -32603, message: 'Internal error: the job crashed' },
          }),
        300,
      );
      return { result: created(task) };
    }
    case 'confirm_delete':
    case 'multi_input': {
      if (!declared) return { error: missingTasks() };
      const task = createTask();
      const asks =
        params.name === 'confirm_delete'
          ? {
              confirm: elicit(`Delete ${args.filename ?? 'the file'}?`, {
                confirm: { type: 'boolean' },
              }),
            }
          : {
              first: elicit('First answer?', { value: { type: 'string' } }),
              second: elicit('Second answer?', { value: { type: 'string' } }),
            };
      task.answers = {};
      task.timer = setTimeout(
        () => settle(task, { status: 'input_required', inputRequests: asks }),
        50,
      );
      task.onInput = (responses) => {
        const pending = { ...task.inputRequests };
        for (const [key, value] of Object.entries(responses ?? {}))
          if (key in pending) {
            task.answers[key] = value;
            delete pending[key];
          }
        if (Object.keys(pending).length > 0) {
          task.inputRequests = pending;
          task.lastUpdatedAt = now();
          return;
        }
        task.status = 'working';
        delete task.inputRequests;
        task.timer = setTimeout(
          () =>
            settle(task, {
              status: 'completed',
              result: text(`done: ${JSON.stringify(task.answers)}`),
            }),
          50,
        );
      };
      return { result: created(task) };
    }
    case 'test_tool_with_task': {
      if (!declared) return { error: missingTasks() };
      const answer = params.inputResponses?.user_name;
      if (answer === undefined)
        return {
          result: {
            resultType: 'input_required',
            inputRequests: { user_name: elicit('Your name?', { name: { type: 'string' } }) },
            requestState: 'asked-name',
          },
        };
      const name = answer?.content?.name ?? 'nobody';
      const task = createTask();
      task.timer = setTimeout(
        () => settle(task, { status: 'completed', result: text(`Hello, ${name}!`) }),
        200,
      );
      return { result: created(task) };
    }
    default:
      return { error: { code: -32602, message: `Unknown tool: ${params.name}` } };
  }
}

function taskMethod(method, params, declared) {
  if (!declared) return { error: missingTasks() };
  const task = tasks.get(params.taskId);
  if (task === undefined)
    return { error: { code: -32602, message: 'Invalid params: unknown taskId' } };
  if (method === 'tasks/get') return { result: detailed(task) };
  if (method === 'tasks/cancel') {
    settle(task, { status: 'cancelled' });
    return { result: { resultType: 'complete' } };
  }
  if (task.status === 'input_required') task.onInput?.(params.inputResponses);
  return { result: { resultType: 'complete' } };
}

async function answer(message, headers) {
  const { method } = message;
  const params = message.params ?? {};
  const meta = params._meta ?? {};
  const mismatch = (what) => ({
    status: 400,
    error: { code: -32020, message: `Header mismatch: ${what}` },
  });
  if (meta[META_VERSION] !== MODERN || headers['mcp-protocol-version'] !== MODERN)
    return mismatch('MCP-Protocol-Version');
  if (message.id === undefined) return { status: 202 };
  if (headers['mcp-method'] !== method) return mismatch('Mcp-Method');
  const named = NAMED.get(method);
  if (named !== undefined && headers['mcp-name']?.trim() !== params[named])
    return mismatch('Mcp-Name');
  const declared = meta[META_CAPS]?.extensions?.[TASKS] !== undefined;
  if (method === 'tools/call' || method.startsWith('tasks/'))
    received.push({ method, name: params.name, taskId: params.taskId, declared });
  switch (method) {
    case 'server/discover':
      return {
        result: {
          resultType: 'complete',
          supportedVersions: [MODERN],
          capabilities: { tools: {}, extensions: { [TASKS]: {} } },
          ttlMs: 0,
          cacheScope: 'public',
          _meta: {
            'io.modelcontextprotocol/serverInfo': { name: 'tasks-upstream', version: '1.0.0' },
          },
        },
      };
    case 'tools/list':
      return { result: { resultType: 'complete', tools: TOOLS, ttlMs: 0, cacheScope: 'public' } };
    case 'tools/call': {
      const out = await callTool(params, declared);
      if (out.result !== undefined && out.result.resultType === undefined)
        out.result = { ...out.result, resultType: 'complete' };
      return out;
    }
    case 'tasks/get':
    case 'tasks/update':
    case 'tasks/cancel':
      return taskMethod(method, params, declared);
    default:
      return { status: 404, error: { code: -32601, message: `Method not found: ${method}` } };
  }
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', async () => {
    if (req.method === 'GET' && req.url === '/received') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(received));
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    let message;
    try {
      message = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32700, message: 'Parse error' },
        }),
      );
      return;
    }
    const out = await answer(message, req.headers);
    if (out.status === 202) {
      res.writeHead(202).end();
      return;
    }
    const body =
      out.error !== undefined
        ? { jsonrpc: '2.0', id: message.id ?? null, error: out.error }
        : { jsonrpc: '2.0', id: message.id, result: out.result };
    res.writeHead(out.status ?? 200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  });
});

const portArg = process.argv.indexOf('--port');
const port = portArg > 0 ? Number(process.argv[portArg + 1]) : Number(process.env.PORT ?? 0);
server.listen(port, '127.0.0.1', () => {
  console.log(`tasks upstream listening on http://127.0.0.1:${server.address().port}/mcp`);
});
const stop = () => {
  for (const task of tasks.values()) clearTimeout(task.timer);
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 1000).unref();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
