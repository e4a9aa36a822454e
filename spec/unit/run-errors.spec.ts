import { expect } from 'chai';
import { RUN_ERRORS } from '../../src/run-errors.js';
import { ERRORS } from '../../src/errors.js';
import { runErrorCatalog } from '../../scripts/docs/render.js';
import { generatedSection, generatedSectionText } from '../../scripts/docs/sections.js';

describe('run-errors: the catalog of a run\'s errorCode', () => {
  it('has unique snake_case codes, none shared with the HTTP catalog, each with a run status and a summary', () => {
    const codes = Object.keys(RUN_ERRORS);
    expect(new Set(codes).size).to.equal(codes.length);
    for (const [code, e] of Object.entries(RUN_ERRORS)) {
      expect(code).to.match(/^[a-z_]+$/);
      expect(ERRORS, `${code} means something else as an HTTP error code`).to.not.have.property(code);
      expect(['failed', 'timed_out', 'succeeded']).to.include(e.status);
      expect(e.summary.trim(), code).to.not.equal('');
    }
    // The codes the runner and the model client produce (src/dispatch/).
    expect(codes).to.include.members(['interrupted', 'model_timeout', 'model_unreachable', 'model_http', 'model_empty_reply', 'model_refused', 'no_recipient', 'delivery_failed']);
  });

  it('is documented: docs/errors.md carries the generated table between the run-error-catalog markers (npm run docs)', () => {
    expect(generatedSection('run-error-catalog').file).to.equal('docs/errors.md');
    expect(generatedSectionText('run-error-catalog')).to.equal(runErrorCatalog().trim());
    for (const code of Object.keys(RUN_ERRORS)) expect(runErrorCatalog()).to.include(`| \`${code}\` |`);
  });
});
