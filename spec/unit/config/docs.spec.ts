import { existsSync } from 'node:fs';
import { expect } from 'chai';
import { configReference } from '../../../scripts/docs/render.js';
import { generatedSection, generatedSectionText, repoFile } from '../../../scripts/docs/sections.js';
import { configSchema } from '../../../src/config/schema.js';
import type { SchemaNode } from '../../../src/schema-node.js';

/** Every property of the schema with its path. */
function properties(node: SchemaNode, path = ''): [string, SchemaNode][] {
  const own = Object.entries(node.properties ?? {}).map(([k, v]): [string, SchemaNode] => [path ? `${path}.${k}` : k, v]);
  return own.flatMap(([p, v]) => [[p, v] as [string, SchemaNode], ...properties(v, p), ...(v.items ? properties(v.items, `${p}[]`) : [])]);
}

describe('config/docs', () => {
  it('every schema property has a description (the schema is the reference)', () => {
    const all = properties(configSchema);
    expect(all.length).to.be.greaterThan(80);
    expect(all.filter(([, v]) => !v.description?.trim()).map(([p]) => p)).to.deep.equal([]);
  });

  it('renders one row per key path, mapping keys under hooks.mappings[]', () => {
    const md = configReference();
    for (const [path, node] of properties(configSchema)) {
      // top-level maps are the sections; everything else has its row
      expect(md, path).to.include(!path.includes('.') && node.properties ? `### \`${path}\`` : `| \`${path}\` |`);
    }
    expect(md).to.include('| `hooks.mappings[].transform.module` | string | — | **Required.**');
    expect(md).to.include('| `hooks.path` | string | `/hooks` |');
    expect(md).to.include('| `hooks.mappings[].action` | `wake` \\| `agent` \\| `respond` | `agent` |');
  });

  it('docs/configuration.md carries exactly the generated reference between the config-reference markers (npm run docs)', () => {
    expect(generatedSection('config-reference').file).to.equal('docs/configuration.md');
    expect(existsSync(repoFile('docs/configuration.md')), 'docs/configuration.md is missing').to.equal(true);
    expect(generatedSectionText('config-reference')).to.equal(configReference().trim());
  });
});
