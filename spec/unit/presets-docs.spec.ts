import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { parse } from 'yaml';
import { configFromObject } from '../../src/config/load.js';
import { knownPresets, PRESET_ALIASES } from '../../src/config/presets.js';
import { ROOT } from '../support/gateway.js';

/**
 * docs/presets.md: every config block loads as written, every message it shows is one a
 * preset's fixture asserts (so the page says what the preset produces), and every preset has
 * its row and section.
 */
const PAGE = fs.readFileSync(path.join(ROOT, 'docs/presets.md'), 'utf8');
const FIXTURES = path.join(ROOT, 'presets/fixtures');
const ENV = Object.fromEntries(['GITHUB', 'STRIPE', 'SENTRY', 'LINEAR', 'PAGERDUTY', 'GRAFANA'].map((n) => [`${n}_WEBHOOK_SECRET`, `${n.toLowerCase()}-secret`]));

const fenced = (lang: string) => [...PAGE.matchAll(new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map((m) => m[1]!);

/** What the fixtures assert: each action's message or text. */
function asserted(): string[] {
  const out: string[] = [];
  for (const preset of fs.readdirSync(FIXTURES, { withFileTypes: true }).filter((e) => e.isDirectory())) {
    for (const file of fs.readdirSync(path.join(FIXTURES, preset.name))) {
      const action = parse(fs.readFileSync(path.join(FIXTURES, preset.name, file), 'utf8'))?.expect?.action;
      if (action) out.push(action.message ?? action.text);
    }
  }
  return out;
}

describe('docs/presets.md', () => {
  it('every hooks: block loads as written (the secrets from the environment)', () => {
    const blocks = fenced('yaml').filter((b) => b.startsWith('hooks:'));
    expect(blocks.length).to.be.at.least(8);
    for (const block of blocks) {
      const { config } = configFromObject(parse(block), path.join(ROOT, 'hookrelay.yaml'), ENV);
      expect(config.hooks.mappings.length, block).to.be.greaterThan(0);
    }
  });

  it('every message it shows is what a preset\'s fixture asserts, word for word', () => {
    const shown = fenced('text').map((t) => t.replace(/\n$/, ''));
    expect(shown.length).to.be.at.least(9);
    const known = asserted();
    for (const text of shown) expect(known, text).to.include(text);
  });

  it('has a row and a section for every preset', () => {
    for (const name of knownPresets().filter((n) => !(n in PRESET_ALIASES))) {
      expect(PAGE, name).to.include(`| \`${name}\` |`);
      if (name !== 'email') expect(PAGE, name).to.match(new RegExp(`^## .*\\n\\n\`\`\`yaml\\nhooks:\\n  presets:(?: \\[${name}\\]|\\n    - ${name}:)`, 'm'));
    }
  });
});
