export * from './gateway-metrics';
export * from './call-context';
export * from './logger';
export * from './observability.module';
