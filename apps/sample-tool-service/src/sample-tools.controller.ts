import { Body, Controller, Get, HttpCode, HttpException, Param, Post } from '@nestjs/common';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import { createHash } from 'node:crypto';
import { CLAIMS, POLICIES, quotePremium } from './sample-data';
import { SAMPLE_BUNDLE_ID, SAMPLE_TOOLS } from './tool-catalog';

const ajv = new Ajv2020({ allErrors: true });
const validators: ReadonlyMap<string, ValidateFunction> = new Map(
  SAMPLE_TOOLS.map((t) => [t.name, ajv.compile(t.inputSchema)]),
);
const revision = `sha256:${createHash('sha256').update(JSON.stringify(SAMPLE_TOOLS)).digest('hex').slice(0, 16)}`;
const slowMillis = Number(process.env.SAMPLE_SLOW_MILLIS ?? 2500);

function badRequest(message: string): HttpException {
  return new HttpException({ error: message }, 400);
}

/** The sample Tool Service: GET /tool-manifest and POST /mcp/{toolName} (contract §4, §10). */
@Controller()
export class SampleToolsController {
  @Get('tool-manifest')
  manifest(): Record<string, unknown> {
    return { bundleId: SAMPLE_BUNDLE_ID, revision, tools: SAMPLE_TOOLS };
  }

  @Post('mcp/:toolName')
  @HttpCode(200)
  async call(
    @Param('toolName') toolName: string,
    @Body() args: unknown,
  ): Promise<Record<string, unknown>> {
    const validate = validators.get(toolName);
    if (validate === undefined) throw new HttpException({ error: `unknown tool ${toolName}` }, 404);
    if (!validate(args ?? {})) {
      const first = validate.errors?.[0];
      throw badRequest(
        `invalid arguments: ${first?.instancePath || '(root)'} ${first?.message ?? 'is invalid'}`,
      );
    }
    const input = (args ?? {}) as Record<string, unknown>;
    switch (toolName) {
      case 'processing.policy.lookup': {
        const policy = POLICIES[input.policyNumber as string];
        if (policy === undefined)
          throw new HttpException({ error: `policy ${String(input.policyNumber)} not found` }, 404);
        return policy;
      }
      case 'processing.claim.status': {
        const claim = CLAIMS[input.claimId as string];
        if (claim === undefined)
          throw new HttpException({ error: `claim ${String(input.claimId)} not found` }, 404);
        return claim;
      }
      case 'processing.premium.quote': {
        const coverage = input.coverage as 'basic' | 'standard' | 'premium';
        const monthlyPremiumKrw = quotePremium(
          input.age as number,
          coverage,
          input.smoker === true,
        );
        return {
          age: input.age,
          coverage,
          smoker: input.smoker === true,
          monthlyPremiumKrw,
          currency: 'KRW',
        };
      }
      case 'processing.underwriting.assess': {
        await new Promise((resolve) => setTimeout(resolve, slowMillis));
        const conditions = (input.declaredConditions as string[] | undefined) ?? [];
        return {
          policyNumber: input.policyNumber,
          riskClass:
            conditions.length === 0
              ? 'preferred'
              : conditions.length < 3
                ? 'standard'
                : 'substandard',
          reasons:
            conditions.length === 0
              ? ['no declared conditions']
              : conditions.map((c) => `declared: ${c}`),
          assessedInMillis: slowMillis,
        };
      }
      default:
        throw new HttpException({ error: `unknown tool ${toolName}` }, 404);
    }
  }
}
