import { parentPort } from 'node:worker_threads';
import { packTools } from './manifest-transfer';
import { crashOf, type WorkerRequest, type WorkerResponse } from './manifest-worker-protocol';
import { SchemaChecker } from './schema-checker';
import { parseKeepingNumbers, type NumberTexts } from './number-texts';
import { validateManifest } from './validate-manifest';

/**
 * Entry of the manifest validation worker (built as dist/apps/gateway/manifest-worker.js):
 * parses and validates one large manifest off the event loop that serves /mcp, so neither
 * JSON.parse of megabytes nor thousands of schema compilations stall a call, and the memory
 * they take is returned when the worker exits.
 */
async function validate(request: WorkerRequest): Promise<WorkerResponse> {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(request.bytes);
  } catch {
    return { kind: 'not-json', why: 'not valid UTF-8' };
  }
  let body: unknown;
  let numbers: NumberTexts | undefined;
  try {
    // numbers a double would rewrite are kept as written (number-texts.ts)
    const kept = parseKeepingNumbers(text);
    body = kept === undefined ? JSON.parse(text) : kept.body;
    numbers = kept?.numbers;
  } catch {
    return { kind: 'not-json', why: 'not valid JSON' };
  }
  const schemas = new SchemaChecker();
  if (request.knownGoodSchemas !== '') schemas.seed(request.knownGoodSchemas.split('\n'));
  const validation = await validateManifest(body, request.expect, schemas, numbers);
  const goodSchemas = schemas.goodDigests().join('\n');
  if (!validation.ok) return { kind: 'rejected', validation, goodSchemas };
  const { bundleId, revision, fingerprint, tools } = validation.manifest;
  return {
    kind: 'accepted',
    bundleId,
    revision,
    fingerprint,
    tools: packTools(tools),
    goodSchemas,
  };
}

parentPort?.once('message', (request: WorkerRequest) => {
  void validate(request)
    .catch((err: unknown): WorkerResponse => crashOf(err))
    .then((response) => {
      const transfer =
        response.kind === 'accepted' ? [response.tools.data, response.tools.offsets] : [];
      parentPort?.postMessage(response, transfer);
    });
});
