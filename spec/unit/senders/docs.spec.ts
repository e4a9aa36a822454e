import path from 'node:path';
import { expect } from 'chai';
import { parse } from 'yaml';
import { generatedSectionText } from '../../../scripts/docs/sections.js';
import { senderMapping, sendersGuide } from '../../../scripts/docs/senders.js';
import { compileConfig } from '../../../src/compile-config.js';
import { configWarnings } from '../../../src/config/warnings.js';
import { SENDERS } from '../../../src/senders/index.js';
import { tmpDir } from '../../support/gateway.js';
import { SENDER_CASES } from '../../support/sender-cases.js';
import { map, request } from '../engine/engine-harness.js';

/** A secret every scheme takes: a `whsec_` base64 key of letters and digits (Telegram's secret_token rule too). */
const SECRET = `whsec_${Buffer.from('spec-key-012').toString('base64')}`;

/**
 * docs/senders.md is generated from the descriptors (src/senders/), and each sender's starting
 * mapping is a config that loads and compiles without a warning and acts on the sender's example.
 */
describe('docs: the sender table (docs/senders.md)', () => {
  it('is what the descriptors say (run npm run docs after changing one)', () => {
    expect(generatedSectionText('senders')).to.equal(sendersGuide().trim());
    for (const d of SENDERS) expect(generatedSectionText('senders')).to.include(`| \`${d.scheme}\` |`).and.include(`### ${d.scheme}\n`);
  });

  it('says for every sender where to paste the URL and the credential', () => {
    for (const d of SENDERS) {
      expect(d.docs.settings, d.scheme).to.include('{hooks.path}/NAME');
      const credential = { basic: /verify\.username.*verify\.password/, publicKey: /verify\.publicKey/, handshake: /handshake/, secret: /verify\.secret/ }[d.credential];
      expect(d.docs.settings, d.scheme).to.match(credential);
      expect(d.docs.mapping, d.scheme).to.include(`scheme: ${d.scheme}`).and.include('auth: signature');
    }
  });

  it('every starting mapping loads and compiles without a warning, and acts on the sender\'s example body', async () => {
    for (const d of SENDERS) {
      const block = senderMapping(d);
      // A public-key scheme's key in its own form (senders/descriptor.ts fixtureKey).
      const key = d.fixtureKey?.().publicKey ?? SECRET;
      const env = Object.fromEntries([...block.matchAll(/\$\{(\w+)\}/g)].map((m) => [m[1]!, key]));
      const { loaded, engine } = await compileConfig(parse(block), path.join(tmpDir(), 'hookrelay.yaml'), env);
      try {
        expect(configWarnings(loaded.config), d.scheme).to.deep.equal([]);
        const example = SENDER_CASES.find((c) => c.scheme === d.scheme);
        if (!example) continue;
        const sent = example.sign({ ...example.verify }, example.body, 0);
        const result = await map(engine, request(d.scheme, JSON.parse(sent.body), { headers: sent.headers }));
        expect(result.type, d.scheme).to.equal('actions');
      } finally {
        await engine.close();
      }
    }
  });
});
