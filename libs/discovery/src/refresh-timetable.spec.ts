import { RefreshTimetable } from './refresh-timetable';

describe('RefreshTimetable (contract §3 "조회 주기와 jitter")', () => {
  it('is first due at start + interval + jitter, then every interval after that', () => {
    const t = new RefreshTimetable(1_000, 30_000, 2_500);
    expect(t.takeDue(33_499)).toBe(false);
    expect(t.takeDue(33_500)).toBe(true);
    expect(t.next).toBe(63_500);
    expect(t.takeDue(63_499)).toBe(false);
    expect(t.takeDue(64_000)).toBe(true); // a heartbeat 0.5 s late: the grid does not move
    expect(t.next).toBe(93_500);
  });

  it('keeps any interval, not only divisors of a minute (7 s: due 7, 14, 21 …)', () => {
    const t = new RefreshTimetable(0, 7_000, 0);
    const due: number[] = [];
    for (let now = 0; now <= 70_000; now += 1_000) if (t.takeDue(now)) due.push(now);
    expect(due).toEqual([7, 14, 21, 28, 35, 42, 49, 56, 63, 70].map((s) => s * 1000));
  });

  it('does not make up refreshes a blocked heartbeat missed: one round, then back on the grid', () => {
    const t = new RefreshTimetable(0, 10_000, 0);
    expect(t.takeDue(45_000)).toBe(true); // 10, 20, 30, 40 all passed: one round now
    expect(t.next).toBe(50_000);
    expect(t.takeDue(49_999)).toBe(false);
    expect(t.takeDue(50_000)).toBe(true);
  });
});
