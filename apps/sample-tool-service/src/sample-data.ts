/** A few made-up policies and claims the sample tools answer from. */
export const POLICIES: Readonly<Record<string, Record<string, unknown>>> = {
  'P-100231': {
    policyNumber: 'P-100231',
    holder: '김민지',
    product: 'Health Plus',
    status: 'active',
    sumInsuredKrw: 50_000_000,
    renewalDate: '2027-03-01',
  },
  'P-100232': {
    policyNumber: 'P-100232',
    holder: 'Lee Jun-ho',
    product: 'Term Life 20',
    status: 'lapsed',
    sumInsuredKrw: 200_000_000,
    renewalDate: '2026-10-15',
  },
};

export const CLAIMS: Readonly<Record<string, Record<string, unknown>>> = {
  'C-2026-0042': {
    claimId: 'C-2026-0042',
    policyNumber: 'P-100231',
    stage: 'assessment',
    assessor: 'Park S.',
    lastUpdate: '2026-11-27T09:12:00+09:00',
  },
  'C-2026-0043': {
    claimId: 'C-2026-0043',
    policyNumber: 'P-100232',
    stage: 'paid',
    assessor: 'Choi H.',
    lastUpdate: '2026-11-20T16:40:00+09:00',
  },
};

const BASE_PREMIUM_KRW = { basic: 18_000, standard: 32_000, premium: 55_000 } as const;

export function quotePremium(
  age: number,
  coverage: keyof typeof BASE_PREMIUM_KRW,
  smoker: boolean,
): number {
  const ageFactor = 1 + Math.max(0, age - 30) * 0.035;
  return Math.round((BASE_PREMIUM_KRW[coverage] * ageFactor * (smoker ? 1.6 : 1)) / 100) * 100;
}
