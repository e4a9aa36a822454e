import { expect } from 'chai';
import { call } from '../../support/gateway.js';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';

/**
 * Scheme `msgraph` (CONTRACT.md §15): Microsoft Graph change notifications carry no signature;
 * each notification's `clientState` must equal the subscription's (verify.secret). The
 * subscription's validation, `POST ?validationToken=V`, is answered 200 text/plain V.
 * https://learn.microsoft.com/en-us/graph/change-notifications-delivery-webhooks#notification-endpoint-validation
 * https://learn.microsoft.com/en-us/graph/change-notifications-delivery-webhooks#receive-notifications
 */
const CLIENT_STATE = 'secretClientValue-0123456789';
const wake = { action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'Graph {{value.0.changeType}} {{value.0.resourceData.[@odata.type]}}' };
const mappings = [
  { id: 'graph', match: { path: 'graph' }, ...wake, auth: 'signature', verify: { scheme: 'msgraph', secret: CLIENT_STATE } },
  { id: 'graph-token', match: { path: 'graph-token' }, ...wake, verify: { scheme: 'msgraph', secret: CLIENT_STATE } },
];

/** The change notification of the docs' example (one message created). */
const note = (clientState = CLIENT_STATE) => ({
  id: 'lsgTZMr9KwAAA', subscriptionId: '7f105c7d-2dc5-4530-97cd-4e7ae6534c07', subscriptionExpirationDateTime: '2016-03-19T22:11:09.952Z',
  clientState, changeType: 'created', resource: 'users/{user_guid}@{tenant_guid}/messages/{long_id_string}', tenantId: '84bd8158-6d4d-4958-8b9f-9d6445542f95',
  resourceData: { '@odata.type': '#Microsoft.Graph.Message', '@odata.id': 'Users/{user_guid}@{tenant_guid}/Messages/{long_id_string}', id: '{long_id_string}' },
});
const TOKEN_TEXT = 'Validation: Testing client application reachability for subscription Request-Id: 4e2e4d2c-3e8b-4f1a-9b1c-2f0c6d1e5a77';
const validate = (path: string, token: string | null = TOKEN_TEXT, extra = '') =>
  fetch(`${path}${token === null ? '' : `?validationToken=${encodeURIComponent(token)}`}${extra}`, { method: 'POST', headers: { 'content-type': 'text/plain; charset=utf-8' }, body: '' });

describe('http: scheme msgraph (Microsoft Graph change notifications)', () => {
  let gw: InProcess;
  before(async () => { gw = await startInProcess({ hooks: { mappings } }); });
  after(async () => { await gw.stop(); });
  const eventCount = async () => (await call(`${gw.hooks}/events?limit=1000`, { token: ADMIN_TOKEN })).data.events.length;

  it('answers the validation POST with the decoded validationToken as text/plain, and no action', async () => {
    const before = await eventCount();
    const r = await validate(`${gw.hooks}/graph`);
    expect(r.status).to.equal(200);
    expect(r.headers.get('content-type')).to.match(/^text\/plain/);
    expect(r.headers.get('x-content-type-options')).to.equal('nosniff');
    expect(await r.text()).to.equal(TOKEN_TEXT);
    expect(await eventCount()).to.equal(before);
  });

  it('acts on notifications whose clientState is the secret, without the hooks token', async () => {
    const body = JSON.stringify({ value: [note(), note()] });
    const r = await call(`${gw.hooks}/graph`, { raw: body, headers: { 'content-type': 'application/json' } });
    expect(r.status, r.text).to.equal(200);
    const events = (await call(`${gw.hooks}/events?limit=1000`, { token: ADMIN_TOKEN })).data.events;
    expect(events.find((e: { id: string }) => e.id === r.data.eventId).text).to.equal('Graph created #Microsoft.Graph.Message');
  });

  it('refuses 401 invalid_signature unless every notification carries the secret as clientState', async () => {
    const { clientState: _, ...withoutState } = note();
    const cases: [string, unknown][] = [
      ['another clientState', { value: [note('not-the-client-state')] }],
      ['one of two wrong', { value: [note(), note('not-the-client-state')] }],
      ['no clientState', { value: [withoutState] }],
      ['no notifications', { value: [] }],
      ['not a notification list', { clientState: CLIENT_STATE }],
    ];
    for (const [what, body] of cases) {
      const r = await call(`${gw.hooks}/graph`, { json: body });
      expect([r.status, r.data.error.code], what).to.deep.equal([401, 'invalid_signature']);
      expect(r.data.error.message, what).to.include('clientState').and.not.include(CLIENT_STATE);
    }
  });

  it('refuses a validation with an empty, too long or control-character token, unanswered (400)', async () => {
    for (const token of ['', 'a'.repeat(1025), 'a\nb']) {
      const r = await validate(`${gw.hooks}/graph`, token);
      expect(r.status, JSON.stringify(token.slice(0, 20))).to.equal(400);
      const data = await r.json() as { error: { code: string; message: string } };
      expect(data.error.code).to.equal('invalid_payload');
      expect(data.error.message).to.include('validationToken');
    }
  });

  it('without auth: signature the validation needs the hooks token, e.g. ?token= in the notificationUrl', async () => {
    const none = await validate(`${gw.hooks}/graph-token`);
    expect(none.status).to.equal(401);
    const r = await validate(`${gw.hooks}/graph-token`, TOKEN_TEXT, `&token=${TOKEN}`);
    expect([r.status, await r.text()]).to.deep.equal([200, TOKEN_TEXT]);
  });
});
