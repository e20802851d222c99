import { isModernVersion } from './eras';

describe('isModernVersion', () => {
  it.each([
    ['2026-07-28', true],
    ['2027-01-15', true],
    ['2026-07-29', true],
    ['2026-07-27', false],
    ['2025-11-25', false],
    ['2025-06-18', false],
    ['2024-11-05', false],
    ['2026-07-28 ', false],
    ['2026-7-28', false],
    ['20260-07-28', false],
    ['latest', false],
    ['', false],
  ])('%j → %s', (version, modern) => {
    expect(isModernVersion(version)).toBe(modern);
  });
});
