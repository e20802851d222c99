export * from './caller-identity';
