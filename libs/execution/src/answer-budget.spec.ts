import { AnswerBudget } from './answer-budget';

describe("AnswerBudget: the answer bytes held at once, and each caller's share of them", () => {
  it('refuses past the whole budget and past a caller share; bytes without a caller count in the whole only', () => {
    const budget = new AnswerBudget(100, 40);
    const bob = { bytes: 0, caller: 'sub:bob' };
    const bob2 = { bytes: 0, caller: 'sub:bob' };
    const alice = { bytes: 0, caller: 'sub:alice' };
    const anonymous = { bytes: 0 };
    expect(budget.take(bob, 30)).toBe(true);
    expect(budget.take(bob2, 20)).toBe(false);
    expect(budget.take(alice, 40)).toBe(true);
    expect(budget.take(anonymous, 30)).toBe(true);
    expect(budget.take(anonymous, 1)).toBe(false);
    expect(budget.heldBytes).toBe(100);
    budget.release(bob);
    budget.release(bob);
    expect(budget.heldBytes).toBe(70);
    expect(budget.take(bob2, 30)).toBe(true);
  });

  it('gives a caller a quarter of the budget, or one largest answer where that is more', () => {
    const of = (maxInFlightAnswerBytes: number, maxResponseBytes: number) =>
      AnswerBudget.of({ mcp: { execution: { maxInFlightAnswerBytes, maxResponseBytes } } } as never)
        .maxPerCaller;
    expect(of(48, 8)).toBe(12);
    expect(of(16, 8)).toBe(8);
    expect(of(4, 8)).toBe(4);
  });
});
