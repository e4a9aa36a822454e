import { configSchema } from '../../src/config/schema.js';
import type { SchemaNode } from '../../src/schema-node.js';

/** The config schema's default at a dotted path: the one place defaults are written. */
function schemaDefault(path: string): number {
  let node: SchemaNode | undefined = configSchema;
  for (const key of path.split('.')) node = node?.properties?.[key];
  if (typeof node?.default !== 'number') throw new Error(`the config schema has no number default at ${path}`);
  return node.default;
}

/**
 * What specs open a store with: the config schema's defaults, as openStore passes them (a store
 * has none of its own), but `retainDays: 0`, so that it purges nothing a spec did not ask for.
 */
export const STORE_SPEC_OPTIONS = {
  retainDays: 0,
  idempotencyWindowSeconds: schemaDefault('hooks.idempotencyWindowSeconds'),
};

/** {@link STORE_SPEC_OPTIONS} and PostgreSQL's own: `store.leaseSeconds`. */
export const PG_SPEC_OPTIONS = {
  ...STORE_SPEC_OPTIONS,
  leaseSeconds: schemaDefault('store.leaseSeconds'),
};
