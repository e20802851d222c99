import { CallCancellation, fanOut } from './call-cancellation';

describe('CallCancellation', () => {
  it('runs its one listener once, with the reason, when aborted; a second abort does nothing', () => {
    const cancellation = new CallCancellation();
    const heard: string[] = [];
    cancellation.onAbort((reason) => heard.push(reason));
    cancellation.abort('client-closed');
    cancellation.abort('shutdown');
    expect(heard).toEqual(['client-closed']);
    expect([cancellation.aborted, cancellation.reason]).toEqual([true, 'client-closed']);
  });

  it('a listener set after the abort runs at once with its reason (no abort is left unheard)', () => {
    const cancellation = new CallCancellation();
    cancellation.abort('cancelled');
    const heard: string[] = [];
    cancellation.onAbort((reason) => heard.push(reason));
    expect(heard).toEqual(['cancelled']);
    cancellation.onAbort(undefined); // removing one is still fine
  });

  it('a listener replaced or removed before the abort is not run', () => {
    const cancellation = new CallCancellation();
    const heard: string[] = [];
    cancellation.onAbort(() => heard.push('first'));
    cancellation.onAbort(() => heard.push('second'));
    cancellation.abort('shutdown');
    expect(heard).toEqual(['second']);
    const removed = new CallCancellation();
    removed.onAbort(() => heard.push('removed'));
    removed.onAbort(undefined);
    removed.abort('shutdown');
    expect(heard).toEqual(['second']);
  });
});

describe('fanOut', () => {
  it('aborts every part with the call, whichever part set its listener last or ended first', () => {
    const call = new CallCancellation();
    const { parts, release } = fanOut(call, 3);
    const heard: string[] = [];
    parts.forEach((part, i) => part.onAbort((reason) => heard.push(`${i}:${reason}`)));
    // the first part ends and clears its own listener: the others still hear the call's end
    parts[0]?.onAbort(undefined);
    call.abort('client-closed');
    expect(heard).toEqual(['1:client-closed', '2:client-closed']);
    expect(parts.every((part) => part.aborted)).toBe(true);
    release();
  });

  it("gives the call's listener slot back on release, and parts of no call are never aborted", () => {
    const call = new CallCancellation();
    const { parts, release } = fanOut(call, 2);
    release();
    call.abort('cancelled');
    expect(parts.some((part) => part.aborted)).toBe(false);
    const alone = fanOut(undefined, 2);
    expect(alone.parts).toHaveLength(2);
    alone.release();
  });
});
