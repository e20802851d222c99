export { UpstreamConnection } from './upstream-connection';
export {
  UpstreamFailure,
  type JsonRpcMessage,
  type UpstreamAnswer,
  type UpstreamConnectOptions,
  type UpstreamEndpoint,
  type UpstreamEra,
  type UpstreamFailureKind,
  type UpstreamMessageContext,
  type UpstreamMessageListener,
  type UpstreamProtocol,
  type UpstreamRequestOptions,
  type UpstreamServerInfo,
  type UpstreamSignal,
} from './upstream-types';
export { GATEWAY_CLIENT_CAPABILITIES, UpstreamConnections } from './upstream-connections.service';
export { UpstreamModule } from './upstream.module';
export { gatewayRequestHeaders, upstreamRequestHeaders } from './upstream-headers';
export {
  readListPages,
  ListPagesFault,
  type ListPages,
  type ListPagesFaultKind,
  type ListPagesRequest,
} from './list-pages';
export {
  guardedConnector,
  guardedLookup,
  UpstreamAddressRefusedError,
  type LookupAll,
} from './connect-guard';
