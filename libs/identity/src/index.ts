export * from './caller-identity';
export * from './source-credentials';
