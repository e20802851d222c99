import { setOwnMember } from './own-member';

/** ClientCapabilities as they travel: `{elicitation: {form: {}}, sampling: {}, …}` (wire notes §2.0). */
export type ClientCapabilities = Readonly<Record<string, unknown>>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The client capability one input request needs (wire notes §4, §5: -32021). */
export function capabilityNeededBy(request: unknown): Record<string, unknown> | undefined {
  if (!isRecord(request)) return undefined;
  const params = isRecord(request.params) ? request.params : {};
  switch (request.method) {
    case 'elicitation/create':
      // an absent mode is form mode (2025-11-25 compatibility)
      return { elicitation: { [params.mode === 'url' ? 'url' : 'form']: {} } };
    case 'sampling/createMessage':
      return { sampling: params.tools === undefined ? {} : { tools: {} } };
    case 'roots/list':
      return { roots: {} };
    default:
      return undefined;
  }
}

/** Whether `declared` covers `required`: every key present (an empty object covers nothing deeper). */
function covers(declared: unknown, required: Record<string, unknown>): boolean {
  if (!isRecord(declared)) return false;
  for (const [key, sub] of Object.entries(required)) {
    if (!(key in declared)) {
      // `elicitation: {}` declares form mode (wire notes §2.0; the v2 SDK's reading)
      if (key === 'form' && Object.keys(declared).length === 0) continue;
      return false;
    }
    if (isRecord(sub) && Object.keys(sub).length > 0 && !covers(declared[key], sub)) return false;
  }
  return true;
}

/**
 * What of an upstream's request to the client the client did not declare: undefined when its
 * capabilities cover what the request needs (`capabilityNeededBy`), else the capability's name,
 * with the mode where only that is missing (`elicitation.url`: a client that declared form-mode
 * elicitation only is never sent a URL-mode one).
 */
export function undeclaredBy(declared: ClientCapabilities, request: unknown): string | undefined {
  const need = capabilityNeededBy(request);
  if (need === undefined || covers(declared, need)) return undefined;
  const [key, sub] = Object.entries(need)[0] ?? ['', {}];
  if (!(key in declared) || !isRecord(sub)) return key;
  const deeper = Object.keys(sub).find((k) => !covers(declared[key], { [k]: sub[k] }));
  return deeper === undefined ? key : `${key}.${deeper}`;
}

/**
 * The capabilities an `input_required` result asks of the client that the request did not
 * declare in `_meta["io.modelcontextprotocol/clientCapabilities"]`, as `requiredCapabilities`
 * for a 400 -32021 (wire notes §1.2, §4: servers MUST NOT include input requests for
 * capabilities the request did not declare). undefined when the result needs nothing missing
 * (or is not `input_required`).
 */
export function missingClientCapabilities(
  result: Readonly<Record<string, unknown>>,
  declared: ClientCapabilities,
): Record<string, unknown> | undefined {
  if (result.resultType !== 'input_required' || !isRecord(result.inputRequests)) return undefined;
  const missing: Record<string, Record<string, unknown>> = {};
  for (const request of Object.values(result.inputRequests)) {
    const need = capabilityNeededBy(request);
    if (need === undefined || covers(declared, need)) continue;
    addRequired(missing, need);
  }
  return Object.keys(missing).length === 0 ? undefined : missing;
}

/** Adds what one request needs to `missing`, merged per capability (as -32021's `requiredCapabilities`). */
export function addRequired(
  missing: Record<string, Record<string, unknown>>,
  need: Readonly<Record<string, unknown>>,
): void {
  for (const [key, sub] of Object.entries(need)) {
    const known = Object.hasOwn(missing, key) ? missing[key] : undefined;
    setOwnMember(missing, key, { ...known, ...(isRecord(sub) ? sub : {}) });
  }
}
