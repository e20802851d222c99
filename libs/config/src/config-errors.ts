/**
 * Thrown by `loadGatewayConfig` when the configuration cannot be used. `problems` names every
 * broken field and why, one line each; `message` is the whole report as printed at boot.
 */
export class ConfigValidationError extends Error {
  override readonly name = 'ConfigValidationError';

  constructor(
    readonly problems: readonly string[],
    readonly context: string,
  ) {
    super(
      `Invalid gateway configuration (${context}): ${problems.length} problem${problems.length === 1 ? '' : 's'}\n` +
        problems.map((p) => `  - ${p}`).join('\n'),
    );
  }
}
