import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { GatewayMetrics } from '@app/observability';

/** GET /actuator/prometheus: the Prometheus text exposition, management port only. */
@Controller('actuator')
export class PrometheusController {
  constructor(private readonly metrics: GatewayMetrics) {}

  @Get('prometheus')
  async prometheus(@Res() reply: FastifyReply): Promise<void> {
    const { contentType, body } = await this.metrics.exposition();
    await reply.code(200).header('content-type', contentType).send(body);
  }
}
