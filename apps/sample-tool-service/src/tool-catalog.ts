/**
 * The sample bundle: insurance processing tools, published at GET /tool-manifest in the
 * bundle contract's manifest format (§5). Names start with the bundle's namePrefix
 * "processing.".
 */
export const SAMPLE_BUNDLE_ID = 'insurance-processing';

export interface SampleToolDefinition {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
  readonly annotations: Record<string, boolean>;
  readonly _meta: {
    readonly version: string;
    readonly timeoutMillis?: number;
    readonly enabled?: boolean;
  };
}

export const SAMPLE_TOOLS: readonly SampleToolDefinition[] = [
  {
    name: 'processing.policy.lookup',
    title: 'Look up a policy',
    description:
      'Returns the holder, product, status, sum insured and renewal date of one insurance policy. ' +
      'Use it when the user names a policy number (format P-123456).',
    inputSchema: {
      type: 'object',
      properties: {
        policyNumber: {
          type: 'string',
          pattern: '^P-[0-9]{6}$',
          description: 'Policy number, e.g. P-100231',
        },
      },
      required: ['policyNumber'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    _meta: { version: '1.2.0', timeoutMillis: 3000 },
  },
  {
    name: 'processing.claim.status',
    title: 'Claim status',
    description:
      'Returns the processing stage, assessor and last update of an insurance claim. ' +
      'Use it when the user asks where a claim stands (claim ids look like C-2026-0001).',
    inputSchema: {
      type: 'object',
      properties: {
        claimId: {
          type: 'string',
          pattern: '^C-[0-9]{4}-[0-9]{4}$',
          description: 'Claim id, e.g. C-2026-0042',
        },
      },
      required: ['claimId'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    _meta: { version: '1.0.3', timeoutMillis: 3000 },
  },
  {
    name: 'processing.premium.quote',
    title: 'Premium quote',
    description:
      'Computes the monthly premium in KRW for a new policy from the applicant age, coverage tier and smoker status. ' +
      'Answers HTTP 400 with a reason when an input is out of range.',
    inputSchema: {
      type: 'object',
      properties: {
        age: {
          type: 'integer',
          minimum: 18,
          maximum: 80,
          description: 'Applicant age in years (18-80)',
        },
        coverage: {
          type: 'string',
          enum: ['basic', 'standard', 'premium'],
          description: 'Coverage tier',
        },
        smoker: { type: 'boolean', description: 'Whether the applicant smokes' },
      },
      required: ['age', 'coverage'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    _meta: { version: '2.0.0', timeoutMillis: 2000 },
  },
  {
    name: 'processing.underwriting.assess',
    title: 'Underwriting assessment',
    description:
      'Runs a full underwriting risk assessment for a policy application and returns the risk class and the ' +
      'reasons. Slow: takes a few seconds. Use it only when the user asks for an assessment.',
    inputSchema: {
      type: 'object',
      properties: {
        policyNumber: { type: 'string', pattern: '^P-[0-9]{6}$' },
        declaredConditions: { type: 'array', items: { type: 'string' }, maxItems: 20 },
      },
      required: ['policyNumber'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    _meta: { version: '0.9.1', timeoutMillis: 10000 },
  },
];
