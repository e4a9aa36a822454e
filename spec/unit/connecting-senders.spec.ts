import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { parse } from 'yaml';
import { compileConfig } from '../../src/compile-config.js';
import { configWarnings } from '../../src/config/warnings.js';
import type { Engine } from '../../src/engine/engine.js';
import type { HookRequest } from '../../src/engine/compile-mapping.js';
import { ROOT, tmpDir } from '../support/gateway.js';
import { map } from './engine/engine-harness.js';

/**
 * docs/connecting-senders.md: every yaml block is a valid config section that loads and
 * compiles (templates, transforms) like `hookrelay check`, without a warning, and the blocks
 * that use an example transform do what the page says.
 */
const PAGE = path.join(ROOT, 'docs/connecting-senders.md');
const ENV = {
  GITHUB_WEBHOOK_SECRET: 'github-secret',
  STRIPE_WEBHOOK_SECRET: 'whsec_stripe',
  SLACK_SIGNING_SECRET: 'slack-secret',
  META_APP_SECRET: 'meta-app-secret',
  META_VERIFY_TOKEN: 'meta-verify-token',
  HOOKRELAY_TOKEN: 'hooks-token-0123456789',
  SENDGRID_HOOK_TOKEN: 'sendgrid-token-0123456789',
  TWILIO_AUTH_TOKEN: 'twilio-auth-token',
  BILLING_WEBHOOK_SECRET: `whsec_${Buffer.from('billing key').toString('base64')}`,
  DISCORD_PUBLIC_KEY: 'a'.repeat(64),
};

function blocks(): string[] {
  return [...fs.readFileSync(PAGE, 'utf8').matchAll(/^```yaml\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

async function compiled(block: string): Promise<{ engine: Engine; warnings: string[] }> {
  const raw = parse(block) as { hooks: Record<string, unknown> };
  // The page's transforms are the repository's examples (transforms/); a user copies them into theirs.
  raw.hooks.transformsDir = path.join(ROOT, 'transforms');
  const { loaded, engine } = await compileConfig(raw, path.join(tmpDir(), 'hookrelay.yaml'), ENV);
  return { engine, warnings: configWarnings(loaded.config) };
}

const request = (name: string, payload: Record<string, unknown>): HookRequest => ({ name, payload, headers: {}, query: {}, url: `/hooks/${name}`, now: new Date() });

describe('docs: connecting senders', () => {
  it('has one block per sender, each a config that loads and compiles without a warning', async () => {
    const all = blocks();
    expect(all).to.have.length(9);
    for (const block of all) {
      const { engine, warnings } = await compiled(block);
      await engine.close();
      expect(warnings, block).to.deep.equal([]);
    }
  });

  it('WhatsApp: a message becomes an agent turn in its sender\'s session; statuses are skipped', async () => {
    const { engine } = await compiled(blocks().find((b) => b.includes('scheme: meta'))!);
    try {
      const value = { messaging_product: 'whatsapp', contacts: [{ profile: { name: 'Sheena Nelson' }, wa_id: '16505551234' }], messages: [{ from: '16505551234', id: 'wamid.1', timestamp: '1749416383', type: 'text', text: { body: 'Does it come in another color?' } }] };
      const message = await map(engine, request('whatsapp', { object: 'whatsapp_business_account', entry: [{ id: '1', changes: [{ value, field: 'messages' }] }] }));
      expect(message.type).to.equal('actions');
      const action = (message as unknown as { actions: Record<string, unknown>[] }).actions[0]!;
      expect(action).to.include({ kind: 'agent', message: 'Sheena Nelson (+16505551234): Does it come in another color?', sessionKey: 'hook:whatsapp:16505551234' });
      const statuses = { messaging_product: 'whatsapp', statuses: [{ id: 'wamid.1', status: 'read', recipient_id: '16505551234' }] };
      const skipped = await map(engine, request('whatsapp', { object: 'whatsapp_business_account', entry: [{ id: '1', changes: [{ value: statuses, field: 'messages' }] }] }));
      expect(skipped.type).to.equal('skipped');
    } finally {
      await engine.close();
    }
  });

  it('SendGrid: the mail\'s fields and attachment list reach the message', async () => {
    const { engine } = await compiled(blocks().find((b) => b.includes('path: sendgrid'))!);
    try {
      const result = await map(engine, request('sendgrid', { from: 'Ada <ada@example.com>', to: 'inbox@parse.example.com', subject: 'Report', text: 'See attached.', files: [{ field: 'attachment1', filename: 'report.pdf', contentType: 'application/pdf', size: 1234 }] }));
      const action = (result as unknown as { actions: Record<string, unknown>[] }).actions[0]!;
      expect(action.message).to.include('E-mail from Ada <ada@example.com> to inbox@parse.example.com: Report')
        .and.include('See attached.').and.include('Attachment: report.pdf (application/pdf, 1234 bytes)');
    } finally {
      await engine.close();
    }
  });
});
