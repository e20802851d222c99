import { addRequired, missingClientCapabilities, undeclaredBy } from './client-capabilities';

const inputRequired = (...requests: object[]) => ({
  resultType: 'input_required',
  inputRequests: Object.fromEntries(requests.map((r, i) => [`k${i}`, r])),
  requestState: 's',
});
const elicit = (mode?: string) => ({
  method: 'elicitation/create',
  params: { ...(mode === undefined ? {} : { mode }), message: 'ok?' },
});

describe('capabilities an input_required result needs (-32021, wire notes §4)', () => {
  it('elicitation in form mode needs elicitation (an empty object declares form mode)', () => {
    expect(missingClientCapabilities(inputRequired(elicit('form')), {})).toEqual({
      elicitation: { form: {} },
    });
    expect(missingClientCapabilities(inputRequired(elicit()), { elicitation: {} })).toBeUndefined();
    expect(
      missingClientCapabilities(inputRequired(elicit('form')), { elicitation: { form: {} } }),
    ).toBeUndefined();
  });

  it('URL mode needs elicitation.url, sampling with tools needs sampling.tools, roots/list needs roots', () => {
    expect(missingClientCapabilities(inputRequired(elicit('url')), { elicitation: {} })).toEqual({
      elicitation: { url: {} },
    });
    expect(
      missingClientCapabilities(
        inputRequired({ method: 'sampling/createMessage', params: { tools: [] } }),
        { sampling: {} },
      ),
    ).toEqual({ sampling: { tools: {} } });
    expect(
      missingClientCapabilities(inputRequired({ method: 'roots/list', params: {} }), {
        sampling: {},
      }),
    ).toEqual({ roots: {} });
  });

  it('names every missing capability of several requests at once', () => {
    expect(
      missingClientCapabilities(
        inputRequired(elicit('form'), { method: 'sampling/createMessage', params: {} }),
        { roots: {} },
      ),
    ).toEqual({ elicitation: { form: {} }, sampling: {} });
  });

  it('a complete result, or one whose requests are all declared, needs nothing', () => {
    expect(missingClientCapabilities({ resultType: 'complete', content: [] }, {})).toBeUndefined();
    expect(
      missingClientCapabilities(inputRequired({ method: 'roots/list', params: {} }), { roots: {} }),
    ).toBeUndefined();
  });
});

describe('undeclaredBy', () => {
  const urlElicitation = {
    method: 'elicitation/create',
    params: { mode: 'url', url: 'https://x' },
  };
  const formElicitation = { method: 'elicitation/create', params: { message: 'name?' } };

  it('is undefined when the declaration covers the request', () => {
    expect(undeclaredBy({ elicitation: { form: {}, url: {} } }, urlElicitation)).toBeUndefined();
    expect(undeclaredBy({ elicitation: {} }, formElicitation)).toBeUndefined();
    expect(undeclaredBy({ roots: {} }, { method: 'roots/list' })).toBeUndefined();
    expect(undeclaredBy({}, { method: 'ping' })).toBeUndefined();
  });

  it('names the mode when only the mode is missing', () => {
    expect(undeclaredBy({ elicitation: { form: {} } }, urlElicitation)).toBe('elicitation.url');
    expect(undeclaredBy({ elicitation: {} }, urlElicitation)).toBe('elicitation.url');
    expect(
      undeclaredBy({ sampling: {} }, { method: 'sampling/createMessage', params: { tools: [] } }),
    ).toBe('sampling.tools');
  });

  it('names the capability when it is not declared at all', () => {
    expect(undeclaredBy({ sampling: {} }, urlElicitation)).toBe('elicitation');
    expect(undeclaredBy({}, { method: 'roots/list' })).toBe('roots');
  });
});

describe('addRequired: a capability named __proto__', () => {
  it('is listed as missing like any, never set as the prototype of the list', () => {
    const missing: Record<string, Record<string, unknown>> = {};
    addRequired(
      missing,
      JSON.parse('{"__proto__":{"x":{}},"sampling":{}}') as Record<string, unknown>,
    );
    expect(Object.getPrototypeOf(missing)).toBe(Object.prototype);
    expect(Object.keys(missing)).toEqual(['__proto__', 'sampling']);
    expect(JSON.stringify(missing)).toBe('{"__proto__":{"x":{}},"sampling":{}}');
  });
});
