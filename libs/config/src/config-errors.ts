import { renderProblem, type ConfigProblem } from './config-problem';

/**
 * Thrown by `loadGatewayConfig` when the configuration cannot be used. `problems` names every
 * broken field and why, one line each; `message` is the whole report as printed at boot.
 */
export class ConfigValidationError extends Error {
  override readonly name = 'ConfigValidationError';
  /** Each problem as the line the boot prints (`path: message`). */
  readonly problems: readonly string[];

  constructor(
    /** Each problem as data (config-problem.ts). */
    readonly details: readonly ConfigProblem[],
    readonly context: string,
  ) {
    const problems = details.map(renderProblem);
    super(
      `Invalid gateway configuration (${context}): ${problems.length} problem${problems.length === 1 ? '' : 's'}\n` +
        problems.map((p) => `  - ${p}`).join('\n'),
    );
    this.problems = problems;
  }
}
