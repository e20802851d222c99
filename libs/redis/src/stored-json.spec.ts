import { STORED_RECORD_ROOM, storedJsonLimit } from './stored-json';

describe('storedJsonLimit', () => {
  it('is eight times the payload that bounded the value, and room for the record', () => {
    expect(storedJsonLimit(1_048_576)).toBe(8 * 1_048_576 + STORED_RECORD_ROOM);
    // a payload written the longest way JSON can (every character \u0001) fits
    const text = JSON.stringify({ v: 1, payload: '\u0001'.repeat(1000) });
    expect(text.length).toBeLessThanOrEqual(storedJsonLimit(1000));
  });
});
