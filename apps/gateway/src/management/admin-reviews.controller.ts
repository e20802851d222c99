import { Body, Controller, Get, Param, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Clock, PinnedTools, type ApprovalOutcome, type SourceReviewView } from '@app/registry';
import type { AdminOutcome } from '../admin/registration-views';
import { AdminChange } from './admin-change';
import { AdminGate } from './admin-gate';

/** At most this many tools in one approval request. */
const MAX_TOOLS_PER_APPROVAL = 1000;

/** GET /admin/reviews: every pinned source with tools held for review. */
export interface ReviewsView {
  readonly sources: readonly ({ readonly id: string } & SourceReviewView)[];
}

/** The body of an approval, checked: each tool by name and the digest the operator reviewed. */
function toolsOf(
  body: unknown,
): { readonly name: string; readonly digest: string }[] | readonly string[] {
  const tools = (body as { tools?: unknown } | null)?.tools;
  if (!Array.isArray(tools) || tools.length === 0)
    return ['tools: is required: a non-empty list of {name, digest} (from GET /admin/reviews)'];
  if (tools.length > MAX_TOOLS_PER_APPROVAL)
    return [`tools: at most ${MAX_TOOLS_PER_APPROVAL} per request`];
  const problems: string[] = [];
  const checked: { name: string; digest: string }[] = [];
  tools.forEach((tool: unknown, i) => {
    const { name, digest } = (tool ?? {}) as { name?: unknown; digest?: unknown };
    if (typeof name !== 'string' || name === '')
      problems.push(`tools[${i}].name: is required: the published tool name`);
    if (typeof digest !== 'string' || digest === '')
      problems.push(
        `tools[${i}].digest: is required: the digest shown for the definition reviewed`,
      );
    if (typeof name === 'string' && typeof digest === 'string') checked.push({ name, digest });
  });
  return problems.length > 0 ? problems : checked;
}

/**
 * Reviews of pinned tool definitions (docs/operations.md §6 "Pinned tool definitions", §15), on
 * the management port with the registration API's access rules: `GET /admin/reviews` lists each
 * pinned source's held tools with the diff of each (approved and pulled members side by side)
 * and its digest; `POST /admin/reviews/{sourceId}/approve` with `{"tools":[{"name","digest"}]}`
 * approves each definition by the digest reviewed (one that changed again since is refused),
 * shares the approvals with the other replicas through Redis and publishes the tools: 200 when
 * any was approved (the refused ones listed), else 409 for a digest that is not the held one,
 * 404 for a tool not held. Every approval attempt is audit-logged.
 */
@Controller('admin/reviews')
export class AdminReviewsController {
  constructor(
    private readonly pinned: PinnedTools,
    private readonly gate: AdminGate,
    private readonly clock: Clock,
  ) {}

  @Get()
  async list(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    if ((await this.gate.admit(req, reply)) === undefined) return;
    const body: ReviewsView = {
      sources: [...this.pinned.reviews()]
        .map(([id, review]) => ({ id, ...review }))
        .sort((a, b) => (a.id < b.id ? -1 : 1)),
    };
    void reply.status(200).send(body);
  }

  @Post(':sourceId/approve')
  @AdminChange('tools.approve')
  async approve(
    @Param('sourceId') sourceId: string,
    @Body() body: unknown,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const id = sourceId.slice(0, 64);
    const actor = await this.gate.admit(req, reply, { action: 'tools.approve', upstreamId: id });
    if (actor === undefined) return;
    if (!this.gate.takesBody(req, reply, 'tools.approve', id, actor)) return;
    const tools = toolsOf(body);
    let outcome: AdminOutcome<ApprovalOutcome>;
    if (tools.length > 0 && typeof tools[0] === 'string') {
      outcome = {
        ok: false,
        reason: 'invalid',
        message: 'The approval is not valid',
        problems: tools as readonly string[],
      };
    } else {
      const result = await this.pinned.approve(
        sourceId,
        tools as { name: string; digest: string }[],
        actor.name,
        this.clock.now().getTime(),
      );
      outcome =
        result.approved.length > 0 || result.refused.length === 0
          ? { ok: true, status: 200, body: result }
          : {
              ok: false,
              reason: result.refused.some((r) => r.code === 'changed') ? 'conflict' : 'notFound',
              message: 'Nothing was approved',
              problems: result.refused.map((r) => `${r.name}: ${r.reason}`),
            };
    }
    this.gate.logChange(
      'tools.approve',
      id,
      actor,
      outcome,
      outcome.ok ? `approved ${outcome.body.approved.join(', ')}` : undefined,
    );
    this.gate.send(reply, outcome);
  }
}
