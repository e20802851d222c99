import { Injectable } from '@nestjs/common';
import type { MethodHandler, MethodResult } from '../methods/method-handler';

/** `ping`: an empty result (2025 lifecycle). */
@Injectable()
export class PingHandler implements MethodHandler {
  readonly method = 'ping';

  handle(): Promise<MethodResult> {
    return Promise.resolve({});
  }
}
