import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Webhooks } from '@octokit/webhooks';
import { expect } from 'chai';
import Stripe from 'stripe';
import { parse } from 'yaml';
import { call, ROOT } from '../../support/gateway.js';
import { ADMIN_TOKEN, startInProcess, type InProcess } from '../../support/in-process.js';

/**
 * The new-user path of docs/presets.md for GitHub and Stripe, as the page writes it: its config
 * block, then the sender's own events signed by the sender's own library (@octokit/webhooks,
 * stripe) through the real listener, with no hooks token — as GitHub and Stripe send them.
 */
const require = createRequire(import.meta.url);
const examples = require('@octokit/webhooks-examples') as { name: string; examples: Record<string, any>[] }[];
const example = (name: string, pick: (e: Record<string, any>) => boolean = () => true) => examples.find((e) => e.name === name)!.examples.find(pick)!;

const GITHUB_SECRET = 'It\'s a Secret to Everybody';
const STRIPE_SECRET = 'whsec_test_5f2c1e0a9b8d7c6e';

/** The `hooks:` block under a heading of the page, its `${VAR}` as the environment would give it. */
function docsBlock(heading: string, env: Record<string, string>): Record<string, any> {
  const page = fs.readFileSync(path.join(ROOT, 'docs/presets.md'), 'utf8');
  const section = page.slice(page.indexOf(`\n## ${heading}\n`));
  const block = /```yaml\n(hooks:[\s\S]*?)```/.exec(section)![1]!;
  return parse(block.replace(/\$\{(\w+)\}/g, (_, name: string) => env[name]!)).hooks;
}

describe('http: the presets\' new-user path for GitHub and Stripe (docs/presets.md)', () => {
  let gw: InProcess;
  const github = new Webhooks({ secret: GITHUB_SECRET });
  const stripe = new Stripe('sk_test_not_used');
  before(async () => {
    const presets = [...docsBlock('GitHub', { GITHUB_WEBHOOK_SECRET: GITHUB_SECRET }).presets, ...docsBlock('Stripe', { STRIPE_WEBHOOK_SECRET: STRIPE_SECRET }).presets];
    expect(presets).to.deep.equal([{ github: { secret: GITHUB_SECRET } }, { stripe: { secret: STRIPE_SECRET } }]);
    gw = await startInProcess({ hooks: { presets } });
  });
  after(async () => { await gw.stop(); });

  const fromGitHub = async (event: string, payload: object, delivery: string, sign = github) => {
    const raw = JSON.stringify(payload);
    const headers = { 'content-type': 'application/json', 'x-github-event': event, 'x-github-delivery': delivery, 'x-hub-signature-256': await sign.sign(raw) };
    return call(`${gw.hooks}/github`, { token: null, raw, headers });
  };
  const fromStripe = (event: object, secret = STRIPE_SECRET) => {
    const raw = JSON.stringify(event);
    const header = stripe.webhooks.generateTestHeaderString({ payload: raw, secret });
    return call(`${gw.hooks}/stripe`, { token: null, raw, headers: { 'content-type': 'application/json', 'stripe-signature': header } });
  };
  const runs = async () => (await call(`${gw.hooks}/runs?limit=200`, { token: ADMIN_TOKEN })).data.runs as { runId: string; sessionKey: string; name?: string }[];
  const events = async () => (await call(`${gw.hooks}/events?limit=200`, { token: ADMIN_TOKEN })).data.events as { id: string; kind: string; text: string }[];

  it('GitHub\'s ping, sent when the webhook is saved, is acknowledged and starts nothing', async () => {
    const [before, eventsBefore] = [(await runs()).length, (await events()).length];
    const r = await fromGitHub('ping', example('ping'), 'delivery-ping');
    expect([r.status, r.text]).to.deep.equal([200, '{"ok":true}']);
    expect((await runs()).length).to.equal(before);
    expect((await events()).length).to.equal(eventsBefore);
  });

  it('an opened issue is an agent run in the issue\'s session; GitHub\'s redelivery of it starts nothing new', async () => {
    const payload = example('issues', (e) => e.action === 'opened' && e.issue.body);
    const r = await fromGitHub('issues', payload, 'delivery-issue-1');
    expect(r.status, r.text).to.equal(202);
    expect(r.data).to.include({ ok: true, action: 'agent', sessionKey: 'hook:github:Codertocat/Hello-World#1' });
    const again = await fromGitHub('issues', payload, 'delivery-issue-1');
    expect(again.data.runId).to.equal(r.data.runId);
    expect((await runs()).filter((run) => run.runId === r.data.runId)).to.have.lengthOf(1);
    expect((await runs()).find((run) => run.runId === r.data.runId)?.name).to.equal('GitHub');
  });

  it('a push is one line for the main session', async () => {
    const r = await fromGitHub('push', example('push', (e) => e.commits.length > 0), 'delivery-push-1');
    expect(r.status, r.text).to.equal(200);
    const line = (await events()).find((e) => e.id === r.data.eventId);
    expect(line?.text).to.equal('GitHub: Codertocat pushed 1 commit to branch master of Codertocat/Hello-World: Initial commit https://github.com/Codertocat/Hello-World/commit/6113728f27ae82c7b1a177c8d03f9e96e0adf246');
  });

  it('an event the preset does not handle is 204, so GitHub lists it delivered', async () => {
    const r = await fromGitHub('star', example('star'), 'delivery-star-1');
    expect(r.status, r.text).to.equal(204);
  });

  it('refuses a body signed with another secret, or tampered with after signing: 401 invalid_signature', async () => {
    const wrong = await fromGitHub('issues', example('issues', (e) => e.action === 'opened'), 'delivery-wrong', new Webhooks({ secret: 'not the secret' }));
    expect([wrong.status, wrong.data.error.code]).to.deep.equal([401, 'invalid_signature']);
    const raw = JSON.stringify(example('issues', (e) => e.action === 'opened'));
    const headers = { 'content-type': 'application/json', 'x-github-event': 'issues', 'x-hub-signature-256': await github.sign(raw) };
    const tampered = await call(`${gw.hooks}/github`, { token: null, raw: raw.replace('Spelling error', 'Spelling errors'), headers });
    expect([tampered.status, tampered.data.error.code]).to.deep.equal([401, 'invalid_signature']);
  });

  it('Stripe: a failed payment is an agent run for the customer; a succeeded one a line; another event 204', async () => {
    const pi = { id: 'pi_3MtwBwLkdIwHu7ix28a3tqPa', object: 'payment_intent', amount: 2000, currency: 'usd', customer: 'cus_NffrFeUfNV2Hib', receipt_email: null, description: null, last_payment_error: { type: 'card_error', code: 'card_declined', message: 'Your card was declined.' } };
    const event = (id: string, type: string, object: object) => ({ id, object: 'event', api_version: '2024-06-20', created: 1680064028, livemode: false, pending_webhooks: 1, request: { id: null, idempotency_key: null }, type, data: { object } });
    const failed = await fromStripe(event('evt_1', 'payment_intent.payment_failed', pi));
    expect(failed.status, failed.text).to.equal(202);
    expect(failed.data).to.include({ action: 'agent', sessionKey: 'hook:stripe:cus_NffrFeUfNV2Hib' });
    const succeeded = await fromStripe(event('evt_2', 'payment_intent.succeeded', { ...pi, last_payment_error: null }));
    expect(succeeded.status, succeeded.text).to.equal(200);
    expect((await events()).find((e) => e.id === succeeded.data.eventId)?.text).to.equal('Stripe (test mode): payment of 20.00 USD from customer cus_NffrFeUfNV2Hib succeeded (pi_3MtwBwLkdIwHu7ix28a3tqPa)');
    const other = await fromStripe(event('evt_3', 'customer.created', { id: 'cus_NffrFeUfNV2Hib', object: 'customer' }));
    expect(other.status, other.text).to.equal(204);
    const wrong = await fromStripe(event('evt_4', 'payment_intent.succeeded', pi), 'whsec_not_the_secret');
    expect([wrong.status, wrong.data.error.code]).to.deep.equal([401, 'invalid_signature']);
  });
});
