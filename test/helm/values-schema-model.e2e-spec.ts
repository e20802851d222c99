import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configModelTree, type ModelNode } from '../support/config-model-tree';

/**
 * helm/mcp-gateway/values.schema.json describes `gateway.config` (the gateway's config file)
 * key for key as the gateway's own config model does (libs/config, the decorators
 * `loadGatewayConfig` validates with), so `helm install` refuses what the gateway would refuse
 * at boot — a typo anywhere inside `gateway.config.mcp` — instead of a pod in a crash loop
 * (helm/mcp-gateway/README.md "Values checked before install").
 */
interface SchemaNode {
  type?: string | string[];
  properties?: Record<string, SchemaNode>;
  additionalProperties?: boolean | SchemaNode;
  items?: SchemaNode;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minLength?: number;
  maxLength?: number;
}

const schema = JSON.parse(
  readFileSync(join(__dirname, '..', '..', 'helm', 'mcp-gateway', 'values.schema.json'), 'utf8'),
) as SchemaNode;
const configSchema = schema.properties?.gateway?.properties?.config as SchemaNode;

/** Every disagreement between the model's tree and the schema's, as "path: what". */
function drift(model: ModelNode, node: SchemaNode, at: string): string[] {
  const out: string[] = [];
  if (node.additionalProperties !== false) out.push(`${at}: takes unknown keys`);
  const properties = node.properties ?? {};
  for (const key of Object.keys(properties))
    if (!model.keys.has(key)) out.push(`${at}.${key}: not a key of the config model`);
  for (const [key, entry] of model.keys) {
    const path = `${at}.${key}`;
    const declared = properties[key];
    if (declared === undefined) {
      out.push(`${path}: missing from the schema`);
      continue;
    }
    // A list's rules apply to its entries in the schema (class-validator's `each`).
    const value = declared.type === 'array' && declared.items ? declared.items : declared;
    if (entry.node) {
      out.push(...drift(entry.node, value, path));
      continue;
    }
    const { checks } = entry;
    const isIn = checks.get('isIn');
    if (isIn) {
      const allowed = [...(isIn[0] as unknown[])].map(String).sort();
      const listed = (value.enum ?? []).map(String).sort();
      if (JSON.stringify(allowed) !== JSON.stringify(listed))
        out.push(`${path}: enum ${JSON.stringify(listed)}, model ${JSON.stringify(allowed)}`);
    }
    const type = (want: string, check: string): void => {
      if (checks.has(check) && !isIn && value.type !== want)
        out.push(`${path}: type ${JSON.stringify(value.type)}, model ${want}`);
    };
    type('integer', 'isInt');
    type('boolean', 'isBoolean');
    type('number', 'isNumber');
    if (checks.has('isArray') && declared.type !== 'array')
      out.push(`${path}: type ${JSON.stringify(declared.type)}, model a list`);
    // the same bounds, inclusive as the model's are (an exclusive 0 would pass what it refuses)
    const min = checks.get('min')?.[0];
    if (typeof min === 'number' && (value.minimum !== min || value.exclusiveMinimum !== undefined))
      out.push(`${path}: minimum ${value.minimum ?? `> ${value.exclusiveMinimum}`}, model ${min}`);
    const max = checks.get('max')?.[0];
    if (typeof max === 'number' && value.maximum !== max)
      out.push(`${path}: maximum ${value.maximum}, model ${max}`);
    const minLength = checks.get('minLength')?.[0];
    if (typeof minLength === 'number' && (value.minLength ?? 0) < minLength)
      out.push(`${path}: minLength ${value.minLength}, model ${minLength}`);
    const maxLength = checks.get('maxLength')?.[0];
    if (typeof maxLength === 'number' && value.maxLength !== maxLength)
      out.push(`${path}: maxLength ${value.maxLength}, model ${maxLength}`);
  }
  return out;
}

describe('values.schema.json: gateway.config is the gateway config model, key for key', () => {
  it('the model tree is read (a walker that saw nothing would agree with anything)', () => {
    const tree = configModelTree();
    const mcp = tree.keys.get('mcp')?.node;
    expect(mcp?.keys.get('registry')?.node?.keys.has('refreshIntervalSeconds')).toBe(true);
    expect(mcp?.keys.get('bundles')?.node?.keys.get('authorization')?.node?.keys.has('mode')).toBe(
      true,
    );
    expect(mcp?.keys.size).toBeGreaterThan(20);
  });

  it('names every key of the model, no other, refuses unknown keys at every level, and agrees on types and ranges', () => {
    expect(drift(configModelTree(), configSchema, 'gateway.config')).toEqual([]);
  });

  it('the check itself sees a key the schema lacks, a stray key, an open object, a wrong range, an exclusive bound and a missing length bound', () => {
    const copy = JSON.parse(JSON.stringify(configSchema)) as SchemaNode;
    const mcp = copy.properties!.mcp!;
    const registry = mcp.properties!.registry!;
    delete registry.properties!.refreshJitterSeconds;
    registry.properties!.refreshIntervalSecond = { type: 'integer' };
    registry.properties!.refreshIntervalSeconds!.maximum = 5;
    delete mcp.properties!.auth!.additionalProperties;
    const limit = mcp.properties!.rateLimits!.properties!.perSubject!.properties!.refillPerSecond!;
    delete limit.minimum;
    limit.exclusiveMinimum = 0;
    delete mcp.properties!.upstreams!.items!.properties!.url!.maxLength;
    expect(drift(configModelTree(), copy, 'gateway.config')).toEqual(
      expect.arrayContaining([
        'gateway.config.mcp.registry.refreshIntervalSecond: not a key of the config model',
        'gateway.config.mcp.registry.refreshJitterSeconds: missing from the schema',
        'gateway.config.mcp.registry.refreshIntervalSeconds: maximum 5, model 86400',
        'gateway.config.mcp.auth: takes unknown keys',
        'gateway.config.mcp.rateLimits.perSubject.refillPerSecond: minimum > 0, model 0.000001',
        'gateway.config.mcp.upstreams.url: maxLength undefined, model 2048',
      ]),
    );
  });
});
