export * from './upstream-types';
export { UpstreamConnection } from './upstream-connection';
export * from './upstream-connections.service';
export * from './upstream.module';
export { upstreamRequestHeaders } from './upstream-headers';
