// When does the runtime give a terminated worker thread's memory back? A worker builds about
// 250 MB of objects, answers and is terminated; the main thread prints its RSS once a second.
// Node 20 returns it at once; Node 24 about 8 s later, when the main thread unmaps the pages
// (docs/benchmarks.md, "Memory"). The bench's 10,000-tool memory figures wait for it.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker, isMainThread, parentPort } from 'node:worker_threads';

const rssMb = () =>
  Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) / 1024);

if (isMainThread) {
  const worker = new Worker(fileURLToPath(import.meta.url));
  worker.once('message', () => {
    void worker.terminate();
    const start = Date.now();
    const readings = [];
    const timer = setInterval(() => {
      readings.push(`${Math.round((Date.now() - start) / 1000)} s: ${rssMb()} MB`);
      if (Date.now() - start < 12_000) return;
      clearInterval(timer);
      console.log(`${process.version}, RSS after the worker ended: ${readings.join(', ')}`);
    }, 1000);
  });
} else {
  const kept = [];
  for (let i = 0; i < 400_000; i++)
    kept.push({
      name: `tool${i}`,
      description: `${'x'.repeat(50)}${i}`,
      inputSchema: { type: 'object' },
    });
  parentPort.postMessage(kept.length);
}
