import { CallCancellation } from './call-cancellation';

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
