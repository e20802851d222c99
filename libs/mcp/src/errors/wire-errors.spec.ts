import { JsonRpcCode } from '@app/wire';
import { modernForwardedError } from './wire-errors';

describe("an upstream's JSON-RPC error as a 2026-07-28 client gets it (wire notes §5)", () => {
  it('-32002 (resource not found, 2025) is -32602 with the message as sent', () => {
    expect(modernForwardedError(JsonRpcCode.ResourceNotFound, 'Resource not found')).toEqual({
      httpStatus: 200,
      code: JsonRpcCode.InvalidParams,
      message: 'Resource not found',
    });
  });

  it('-32601 is HTTP 404, -32021 HTTP 400', () => {
    expect(modernForwardedError(JsonRpcCode.MethodNotFound, 'm').httpStatus).toBe(404);
    expect(modernForwardedError(JsonRpcCode.MissingClientCapability, 'm').httpStatus).toBe(400);
  });

  it('any other code of the reserved range -32020…-32099 is -32603 naming it', () => {
    for (const code of [-32020, -32022, -32042, -32050, -32099]) {
      const wire = modernForwardedError(code, 'vendor words');
      expect(wire).toMatchObject({ httpStatus: 200, code: JsonRpcCode.InternalError });
      expect(wire.message).toContain(String(code));
      expect(wire.message).toContain('vendor words');
    }
  });

  it('codes outside it pass as sent, in-band', () => {
    for (const code of [-32000, -32001, -32019, -32100, -32602, -32603, 42, -1])
      expect(modernForwardedError(code, 'm')).toEqual({ httpStatus: 200, code, message: 'm' });
  });
});
