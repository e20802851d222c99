import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

/** What the task-capable upstream received: tools/call and tasks/* requests, in order. */
export interface TasksUpstreamRequest {
  readonly method: string;
  readonly name?: string;
  readonly taskId?: string;
  /** The request's _meta clientCapabilities declared io.modelcontextprotocol/tasks. */
  readonly declared: boolean;
}

/**
 * test/support/tasks-upstream.mjs in its own process: a stateless 2026-07-28 upstream with the
 * Tasks extension and the conformance suite's fixture tools (docs/operations.md §10 "Tasks").
 */
export class TasksUpstream {
  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
  ) {}

  static async start(): Promise<TasksUpstream> {
    const child = spawn(process.execPath, [join(__dirname, 'tasks-upstream.mjs'), '--port', '0'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout?.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        const m = / listening on (http\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      child.on('exit', (code) => reject(new Error(`tasks upstream exited (${code}): ${out}`)));
    });
    return new TasksUpstream(child, url);
  }

  async received(): Promise<TasksUpstreamRequest[]> {
    const res = await fetch(this.url.replace(/\/mcp$/, '/received'));
    return (await res.json()) as TasksUpstreamRequest[];
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.kill('SIGTERM');
    await exited;
  }
}
