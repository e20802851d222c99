import 'reflect-metadata';
import { getMetadataStorage } from 'class-validator';
import type { MetadataStorage } from 'class-transformer/types/MetadataStorage';
import { ConfigFileRoot } from '../../libs/config/src/mcp-config.model';

/**
 * The key tree of the gateway's config model (libs/config), read from the decorator metadata
 * `loadGatewayConfig` validates with (its whitelist refuses any other key): every key a config
 * file may hold; for a key whose value is a mapping, or a list of mappings, of a model class,
 * that class's keys; for a leaf, what its decorators say of its type and range.
 */
export interface ModelNode {
  readonly keys: ReadonlyMap<string, ModelKey>;
}

export interface ModelKey {
  /** The nested model class's keys, when the value is (a list of) mappings. */
  readonly node?: ModelNode;
  /** The class-validator checks on the key, by name (isInt, min, max, isIn, isArray, …). */
  readonly checks: ReadonlyMap<string, readonly unknown[]>;
}

/** class-transformer's `@Type()` records: the package exports them only from this file. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { defaultMetadataStorage } = require('class-transformer/cjs/storage') as {
  defaultMetadataStorage: MetadataStorage;
};

type Ctor = abstract new (...args: never[]) => unknown;

function nodeOf(target: Ctor, seen: ReadonlySet<Ctor>): ModelNode {
  const metadata = getMetadataStorage().getTargetValidationMetadatas(target, '', true, false);
  const checks = new Map<string, Map<string, readonly unknown[]>>();
  for (const m of metadata) {
    const byName = checks.get(m.propertyName) ?? new Map<string, readonly unknown[]>();
    if (m.name !== undefined) byName.set(m.name, (m.constraints ?? []) as readonly unknown[]);
    checks.set(m.propertyName, byName);
  }
  const keys = new Map<string, ModelKey>();
  for (const [name, byName] of checks) {
    const type = defaultMetadataStorage.findTypeMetadata(target, name);
    const nested = type?.typeFunction() as Ctor | undefined;
    keys.set(name, {
      checks: byName,
      node: nested && !seen.has(nested) ? nodeOf(nested, new Set([...seen, nested])) : undefined,
    });
  }
  return { keys };
}

/** The tree under a config file's root (`mcp:`). */
export function configModelTree(): ModelNode {
  return nodeOf(ConfigFileRoot, new Set([ConfigFileRoot]));
}
