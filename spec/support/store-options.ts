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
 * What the specs open a store with unless a spec says otherwise. A store keeps no defaults of
 * its own (they are the config schema's, and openStore passes them on), so specs that open one
 * directly take them from the schema too — except `retainDays`: 0 (keep everything), so that a
 * spec's store purges nothing it did not ask for, as before stores had no defaults.
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
