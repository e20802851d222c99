export * from './gateway-metrics';
export * from './logger';
export * from './observability.module';
