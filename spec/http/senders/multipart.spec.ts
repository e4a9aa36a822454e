import { createHmac } from 'node:crypto';
import path from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { call } from '../../support/gateway.js';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';
import { REQUEST_LOG } from '../../support/request-log-sql.js';

/**
 * multipart/form-data on mapped hooks (CONTRACT.md §12): SendGrid Inbound Parse, Mailgun, HTML
 * forms. Each mapping's event text is its whole payload as JSON (jsonata `$string(payload)`), so that
 * the spec sees exactly what a template would.
 */
const whole = { action: 'wake', wakeMode: 'next-heartbeat', engine: 'jsonata', textTemplate: '$string(payload)' };
const mappings = [
  { id: 'sendgrid', match: { path: 'sendgrid' }, ...whole, maxBodyBytes: 64 * 1024 },
  { id: 'form', match: { path: 'form' }, ...whole, maxBodyBytes: 1024 * 1024 },
  { id: 'signed-form', match: { path: 'signed-form' }, ...whole, auth: 'signature', verify: { scheme: 'hmac', header: 'x-form-signature', secret: 'form-secret' } },
];

/**
 * What SendGrid Inbound Parse posts for a mail with one attachment (default, not raw, mode):
 * https://www.twilio.com/docs/sendgrid/for-developers/parsing-email/setting-up-the-inbound-parse-webhook
 */
function sendgridForm(attachment = Buffer.from('%PDF-1.4 the attachment bytes, never kept')): FormData {
  const form = new FormData();
  form.append('headers', 'Received: by mx0047p1mdw1.sendgrid.net\nSubject: Grüße aus Berlin\nFrom: Ada Lovelace <ada@example.com>\nTo: inbox@parse.example.com\n');
  form.append('dkim', '{@example.com : pass}');
  form.append('content-ids', '{}');
  form.append('to', 'inbox@parse.example.com');
  form.append('from', 'Ada Lovelace <ada@example.com>');
  form.append('text', 'Hello from Berlin.');
  form.append('html', '<p>Hello from Berlin.</p>');
  form.append('sender_ip', '209.85.223.171');
  form.append('spam_report', 'Spam detection software, running on the system "mx0047p1mdw1.sendgrid.net" ...');
  form.append('envelope', '{"to":["inbox@parse.example.com"],"from":"ada@example.com"}');
  form.append('attachments', '1');
  form.append('subject', 'Grüße aus Berlin');
  form.append('spam_score', '0.011');
  form.append('attachment-info', '{"attachment1":{"filename":"report.pdf","name":"report.pdf","type":"application/pdf"}}');
  form.append('charsets', '{"to":"UTF-8","html":"UTF-8","subject":"UTF-8","from":"UTF-8","text":"UTF-8"}');
  form.append('SPF', 'pass');
  form.append('attachment1', new Blob([attachment], { type: 'application/pdf' }), 'report.pdf');
  return form;
}

/** The bytes and Content-Type (with its boundary) that fetch would send for a form. */
async function encode(form: FormData): Promise<{ body: Buffer; contentType: string }> {
  const req = new Request('http://localhost/', { method: 'POST', body: form });
  return { body: Buffer.from(await req.arrayBuffer()), contentType: req.headers.get('content-type')! };
}

async function post(url: string, body: Uint8Array | string, headers: Record<string, string>) {
  const r = await fetch(url, { method: 'POST', headers, body: body as BodyInit });
  const text = await r.text();
  let data: any = null;
  try { data = JSON.parse(text); } catch { /* not JSON */ }
  return { status: r.status, text, data };
}

describe('http: multipart/form-data on mapped hooks', () => {
  let gw: InProcess;
  // keepBodies: the request log keeps bodies, but never a form's (its files' contents).
  before(async () => { gw = await startInProcess({ hooks: { maxBodyBytes: 16 * 1024, keepBodies: 7, mappings } }); });
  after(async () => { await gw.stop(); });

  async function payloadOf(eventId: string): Promise<any> {
    const events = await call(`${gw.hooks}/events?limit=1000`, { token: ADMIN_TOKEN });
    const event = events.data.events.find((e: { id: string }) => e.id === eventId);
    return JSON.parse(event.text);
  }

  it('reads a SendGrid Inbound Parse mail as its fields plus files, without the file\'s contents', async () => {
    const { body, contentType } = await encode(sendgridForm());
    const r = await post(`${gw.hooks}/sendgrid`, body, { authorization: `Bearer ${TOKEN}`, 'content-type': contentType });
    expect(r.status, r.text).to.equal(200);
    const payload = await payloadOf(r.data.eventId);
    expect(payload).to.include({
      from: 'Ada Lovelace <ada@example.com>', to: 'inbox@parse.example.com', subject: 'Grüße aus Berlin',
      text: 'Hello from Berlin.', html: '<p>Hello from Berlin.</p>', attachments: '1', spam_score: '0.011', SPF: 'pass',
    });
    expect(JSON.parse(payload.envelope)).to.deep.equal({ to: ['inbox@parse.example.com'], from: 'ada@example.com' });
    expect(JSON.parse(payload['attachment-info']).attachment1.filename).to.equal('report.pdf');
    // Files are not fields, and their contents are not kept.
    expect(payload).to.not.have.property('attachment1');
    expect(payload.files).to.deep.equal([{ field: 'attachment1', filename: 'report.pdf', contentType: 'application/pdf', size: 41 }]);
    expect(JSON.stringify(payload)).to.not.include('never kept');
  });

  it('keeps no multipart body in the request log, even with hooks.keepBodies: file contents are never stored', async () => {
    const { body, contentType } = await encode(sendgridForm());
    const r = await post(`${gw.hooks}/sendgrid`, body, { authorization: `Bearer ${TOKEN}`, 'content-type': contentType, 'x-request-id': 'multipart-kept' });
    expect(r.status, r.text).to.equal(200);
    const json = await call(`${gw.hooks}/sendgrid`, { token: TOKEN, json: { from: 'a' }, headers: { 'x-request-id': 'json-kept' } });
    expect(json.status).to.equal(200);
    const db = new Database(path.join(gw.dir, 'data', 'hookrelay.db'), { readonly: true });
    try {
      const rows = db.prepare(`SELECT request_id, status, body FROM ${REQUEST_LOG} WHERE request_id IN ('multipart-kept', 'json-kept')`).all() as { request_id: string; status: number; body: string | null }[];
      expect(rows.find((row) => row.request_id === 'multipart-kept')).to.include({ status: 200, body: null });
      expect(rows.find((row) => row.request_id === 'json-kept')).to.include({ status: 200, body: '{"from":"a"}' });
    } finally {
      db.close();
    }
  });

  it('makes a field sent twice an array, gives `files: []` without files, and drops prototype keys', async () => {
    const form = new FormData();
    form.append('tag', 'a');
    form.append('tag', 'b');
    form.append('name', 'Ada');
    form.append('__proto__', 'x');
    form.append('constructor', 'y');
    const { body, contentType } = await encode(form);
    const r = await post(`${gw.hooks}/sendgrid`, body, { authorization: `Bearer ${TOKEN}`, 'content-type': contentType });
    expect(r.status, r.text).to.equal(200);
    expect(await payloadOf(r.data.eventId)).to.deep.equal({ tag: ['a', 'b'], name: 'Ada', files: [] });
  });

  it('answers 413 payload_too_large to a form past the mapping\'s maxBodyBytes', async () => {
    const { body, contentType } = await encode(sendgridForm(Buffer.alloc(80 * 1024, 0x41)));
    const r = await post(`${gw.hooks}/sendgrid`, body, { authorization: `Bearer ${TOKEN}`, 'content-type': contentType });
    expect([r.status, r.data.error.code]).to.deep.equal([413, 'payload_too_large']);
    expect(r.data.error.message).to.include('maxBodyBytes of mapping "sendgrid"');
  });

  it('answers 413 payload_too_large, naming the limit, to a form of more than 1000 parts or 100 files', async () => {
    const fields = new FormData();
    for (let i = 0; i < 1000; i++) fields.append(`f${i}`, '');
    const atLimit = await encode(fields);
    const ok = await post(`${gw.hooks}/form`, atLimit.body, { authorization: `Bearer ${TOKEN}`, 'content-type': atLimit.contentType });
    expect(ok.status, ok.text).to.equal(200);
    fields.append('f1000', '');
    const files = new FormData();
    for (let i = 0; i <= 100; i++) files.append(`a${i}`, new Blob(['x']), `a${i}.txt`);
    for (const [what, form, limit] of [['parts', fields, 'more than 1000 parts'], ['files', files, 'more than 100 files']] as const) {
      const { body, contentType } = await encode(form);
      const r = await post(`${gw.hooks}/form`, body, { authorization: `Bearer ${TOKEN}`, 'content-type': contentType });
      expect([r.status, r.data.error.code], what).to.deep.equal([413, 'payload_too_large']);
      expect(r.data.error.message, what).to.include(limit);
    }
  });

  it('answers 400 to a form that cannot be read, and to a field named files', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const noBoundary = await post(`${gw.hooks}/sendgrid`, 'x', { ...auth, 'content-type': 'multipart/form-data' });
    expect([noBoundary.status, noBoundary.data.error.code]).to.deep.equal([400, 'invalid_json']);
    expect(noBoundary.data.error.message).to.include('boundary');
    const cut = await post(`${gw.hooks}/sendgrid`, '--b\r\ncontent-disposition: form-data; name="a"\r\n\r\nnot ended', { ...auth, 'content-type': 'multipart/form-data; boundary=b' });
    expect([cut.status, cut.data.error.code]).to.deep.equal([400, 'invalid_json']);
    const form = new FormData();
    form.append('files', 'mine');
    const { body, contentType } = await encode(form);
    const named = await post(`${gw.hooks}/sendgrid`, body, { ...auth, 'content-type': contentType });
    expect([named.status, named.data.error.code]).to.deep.equal([400, 'invalid_payload']);
    expect(named.data.error.message).to.include('files');
  });

  it('checks a signature over the raw multipart bytes', async () => {
    const { body, contentType } = await encode(sendgridForm());
    const signature = createHmac('sha256', 'form-secret').update(body).digest('hex');
    const ok = await post(`${gw.hooks}/signed-form`, body, { 'content-type': contentType, 'x-form-signature': signature });
    expect(ok.status, ok.text).to.equal(200);
    expect((await payloadOf(ok.data.eventId)).subject).to.equal('Grüße aus Berlin');
    const tampered = Buffer.from(body.toString('latin1').replace('Berlin.', 'Berlin!'), 'latin1');
    const bad = await post(`${gw.hooks}/signed-form`, tampered, { 'content-type': contentType, 'x-form-signature': signature });
    expect([bad.status, bad.data.error.code]).to.deep.equal([401, 'invalid_signature']);
  });

  it('keeps /wake and /agent JSON-only: a form there is 400 invalid_json', async () => {
    const form = new FormData();
    form.append('text', 'hello');
    const { body, contentType } = await encode(form);
    const r = await post(`${gw.hooks}/wake`, body, { authorization: `Bearer ${TOKEN}`, 'content-type': contentType });
    expect([r.status, r.data.error.code]).to.deep.equal([400, 'invalid_json']);
  });
});
