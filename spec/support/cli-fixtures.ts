import fs from 'node:fs';
import path from 'node:path';
import { tmpDir } from './gateway.js';

const SW_SECRET = `whsec_${Buffer.from('standard webhooks key for fixtures').toString('base64')}`;

/**
 * A config with a mapping for every `verify` scheme, in a new folder, and fixtures for it: the
 * ones `hookrelay test --fixtures` passes (`passing`, `signed`) and `folder` to write a set.
 */
export function fixturesConfig() {
  const dir = tmpDir();
  const transforms = path.join(dir, 'transforms');
  fs.mkdirSync(transforms);
  fs.writeFileSync(path.join(transforms, 'quiet.mjs'), 'export default function (input) { return input.payload.quiet ? null : { text: `said ${input.payload.say}` }; }\n');
  const config = {
    dataDir: path.join(dir, 'data'),
    hooks: {
      token: 't',
      transformsDir: transforms,
      mappings: [
        { id: 'contact', match: { path: 'contact' }, action: 'agent', messageTemplate: 'from {{name}}: {{message}}', sessionKey: 'hook:c:{{name}}' },
        { id: 'note', match: { path: 'note' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'note {{n}}' },
        { id: 'each', match: { path: 'each' }, action: 'wake', forEach: 'items', textTemplate: 'item {{index}} {{v}}' },
        { id: 'quiet', match: { path: 'quiet' }, action: 'wake', textTemplate: 'x', transform: { module: 'quiet.mjs' } },
        { id: 'gh', match: { path: 'github', headers: { 'x-github-event': 'push' } }, action: 'agent', messageTemplate: 'push to {{ref}}', sessionKey: 'hook:gh:{{repository.id}}', verify: { scheme: 'github', secret: 'gh-secret' } },
        { id: 'stripe', match: { path: 'stripe' }, action: 'wake', textTemplate: 'stripe {{type}}', verify: { scheme: 'stripe', secret: 'whsec_stripe' } },
        { id: 'slack', match: { path: 'slack' }, action: 'wake', textTemplate: 'slack {{event.type}}', verify: { scheme: 'slack', secret: 'slack-secret' } },
        { id: 'sw', match: { path: 'sw' }, action: 'wake', textTemplate: 'sw {{type}}', verify: { scheme: 'standard-webhooks', secret: SW_SECRET } },
        { id: 'shop', match: { path: 'shop' }, action: 'wake', textTemplate: 'order {{id}}', verify: { scheme: 'hmac', secret: 'shop-secret', header: 'X-Shopify-Hmac-Sha256', encoding: 'base64' } },
      ],
    },
  };
  const file = path.join(dir, 'hookrelay.json');
  fs.writeFileSync(file, JSON.stringify(config));
  /** A folder of fixture files: name → content (an object as JSON, a string as it is). */
  const folder = (files: Record<string, unknown>) => {
    const d = fs.mkdtempSync(path.join(dir, 'fx-'));
    for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(d, name), typeof content === 'string' ? content : JSON.stringify(content));
    return d;
  };
  
  const passing = {
    'a-agent.json': { name: 'contact form', request: { path: 'contact', body: { name: 'ada', message: 'hi' } }, expect: { status: 202, action: { action: 'agent', sessionKey: 'hook:c:ada', message: 'from ada: hi' } } },
    'b-wake.yaml': 'name: a note\nrequest: {path: note, body: {n: 1}}\nexpect: {status: 200, action: {mapping: note, action: wake, text: note 1, mode: next-heartbeat}}\n',
    'c-each.yml': 'name: each item\nrequest: {path: each, body: {items: [{v: a}, {v: b}]}}\nexpect:\n  actions:\n    - {mapping: each, text: item 0 a}\n    - {text: item 1 b}\n',
    'd-skipped-by-mapping.json': { name: 'a quiet one is skipped', request: { path: 'quiet', body: { quiet: true } }, expect: { status: 204, skipped: true } },
    'e-no-mapping.json': { name: 'nothing takes /hooks/nope', request: { path: 'nope', body: {} }, expect: { status: 404, response: { ok: false, error: { code: 'no_mapping' } } } },
    'f-form.json': { name: 'form data', request: { path: 'contact', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'name=bo&message=yo' }, expect: { action: { message: 'from bo: yo' } } },
    'g-later.yaml': 'name: not yet\nskip: waiting for the ci mapping\nrequest: {path: ci, body: {}}\nexpect: {status: 200}\n',
  };
  const signed = {
    'github.json': { name: 'github push, signed', sign: true, request: { path: 'github', headers: { 'X-GitHub-Event': 'push' }, body: { ref: 'main', repository: { id: 7 } } }, expect: { status: 202, action: { sessionKey: 'hook:gh:7', message: 'push to main' } } },
    'stripe.json': { name: 'stripe, signed', sign: true, request: { path: 'stripe', body: { type: 'invoice.paid' } }, expect: { status: 200, action: { text: 'stripe invoice.paid' } } },
    'slack.json': { name: 'slack, signed', sign: true, request: { path: 'slack', body: { event: { type: 'message' } } }, expect: { action: { text: 'slack message' } } },
    'sw.json': { name: 'standard webhooks, signed', sign: true, request: { path: 'sw', headers: { 'webhook-id': 'msg_1' }, body: { type: 'user.created' } }, expect: { action: { text: 'sw user.created' } } },
    'shop.json': { name: 'shopify hmac, signed', sign: true, request: { path: 'shop', body: { id: 12 } }, expect: { action: { text: 'order 12' } } },
  };
  return { dir, file, folder, passing, signed };
}
