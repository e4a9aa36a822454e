import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { ERRORS, HookError, errorBody } from '../../src/errors.js';
import { errorCatalog } from '../../scripts/docs/render.js';
import { generatedSection, generatedSectionText, repoFile } from '../../scripts/docs/sections.js';

describe('errors: the catalog', () => {
  it('has one stable status per code, 4xx or 5xx, each with a summary', () => {
    for (const [code, e] of Object.entries(ERRORS)) {
      expect(code, code).to.match(/^[a-z_]+$/);
      expect(e.status, code).to.be.within(400, 599);
      expect(e.summary.trim(), code).to.not.equal('');
    }
  });

  it('carries every code the contract names, with the contract status', () => {
    const contract: Record<string, number> = {
      invalid_json: 400, invalid_payload: 400, model_not_allowed: 400, session_key_not_allowed: 400,
      unauthorized: 401, no_mapping: 404, method_not_allowed: 405, payload_too_large: 413,
      rate_limited: 429, transform_failed: 500,
    };
    for (const [code, status] of Object.entries(contract)) {
      expect(ERRORS[code as keyof typeof ERRORS]?.status, code).to.equal(status);
    }
  });

  it('writes each code once: a repeated key in src/errors.ts would silently replace the first', () => {
    const source = readFileSync(new URL('../../src/errors.ts', import.meta.url), 'utf8');
    const catalog = source.slice(source.indexOf('export const ERRORS = {'), source.indexOf('} as const;'));
    const written = [...catalog.matchAll(/^\s+([a-z_]+): \{ status:/gm)].map((m) => m[1]);
    expect(written.length, 'codes found in the source').to.be.greaterThan(10);
    expect(written.filter((c, i) => written.indexOf(c) !== i), 'codes written twice').to.deep.equal([]);
    expect([...written].sort()).to.deep.equal(Object.keys(ERRORS).sort());
    const summaries = Object.values(ERRORS).map((e) => e.summary);
    expect(summaries.filter((t, i) => summaries.indexOf(t) !== i), 'two codes with one meaning').to.deep.equal([]);
  });

  it('names every code, with its status, in docs/errors.md', () => {
    const catalog = readFileSync(repoFile(generatedSection('error-catalog').file), 'utf8');
    for (const [code, e] of Object.entries(ERRORS)) expect(catalog, code).to.include(`| ${e.status} | \`${code}\` |`);
  });

  it('is documented: docs/errors.md carries the generated catalog (npm run docs)', () => {
    expect(generatedSection('error-catalog').file).to.equal('docs/errors.md');
    expect(generatedSectionText('error-catalog')).to.equal(errorCatalog().trim());
  });

  it('HookError takes its status from the catalog and exposes only client errors', () => {
    expect(new HookError('no_mapping', 'x').status).to.equal(404);
    expect(new HookError('no_mapping', 'x').expose).to.equal(true);
    expect(new HookError('transform_failed', 'secret detail').expose).to.equal(false);
    expect(JSON.parse(errorBody('unauthorized', 'm'))).to.deep.equal({ ok: false, error: { code: 'unauthorized', message: 'm' } });
  });
});
