import { CallCancellation } from '@app/execution';
import { InFlightRequests } from './in-flight-requests';

describe('InFlightRequests.endSession', () => {
  it("aborts the session's requests still in flight (session-ended), and no other session's or sessionless one", () => {
    const inFlight = new InFlightRequests();
    const mine1 = new CallCancellation();
    const mine2 = new CallCancellation();
    const done = new CallCancellation();
    const other = new CallCancellation();
    const sessionless = new CallCancellation();
    inFlight.register(inFlight.keyOf('s1', undefined, 1, '1'), mine1, 's1');
    inFlight.register(inFlight.keyOf('s1', undefined, 1, '2'), mine2, 's1');
    const doneKey = inFlight.keyOf('s1', undefined, 1, '3');
    inFlight.register(doneKey, done, 's1');
    inFlight.unregister(doneKey, done, 's1');
    inFlight.register(inFlight.keyOf('s2', undefined, 1, '1'), other, 's2');
    inFlight.register(inFlight.keyOf(undefined, undefined, 1, '1'), sessionless);

    expect(inFlight.endSession('s1')).toBe(2);
    expect([mine1.reason, mine2.reason]).toEqual(['session-ended', 'session-ended']);
    expect([done.aborted, other.aborted, sessionless.aborted]).toEqual([false, false, false]);
    expect(inFlight.endSession('s1')).toBe(0);
  });

  it('forgets a session once its last request is unregistered, and does not count one aborted already', () => {
    const inFlight = new InFlightRequests();
    const call = new CallCancellation();
    const key = inFlight.keyOf('s1', undefined, 1, '1');
    inFlight.register(key, call, 's1');
    inFlight.unregister(key, call, 's1');
    expect(inFlight.endSession('s1')).toBe(0);
    const cancelled = new CallCancellation();
    inFlight.register(key, cancelled, 's1');
    cancelled.abort('cancelled');
    expect(inFlight.endSession('s1')).toBe(0);
    expect(cancelled.reason).toBe('cancelled');
  });
});
