import { expect } from 'chai';
import { readMail, safeId } from '../../src/email/message.js';

/** Reading one raw mail for the preset (CONTRACT.md §7): never throws, bounded work, safe ids. */
describe('email message (readMail)', function () {
  this.timeout(30000);
  const place = { uidValidity: 7, uid: 42 };
  const limits = { bodyMaxChars: 8000, snippetChars: 200 };
  /** The CPU time this process spent in `read` (user + system, https://nodejs.org/api/process.html#processcpuusagepreviousvalue): work, whatever else the machine runs. */
  async function cpuMs<T>(read: () => Promise<T>): Promise<[T, number]> {
    const before = process.cpuUsage();
    const out = await read();
    const used = process.cpuUsage(before);
    return [out, Math.round((used.user + used.system) / 1000)];
  }

  it('a mail mailparser refuses is read from its main headers, wherever they sit, with parseError', async () => {
    const filler = Array.from({ length: 20000 }, (_, i) => `X-Filler-${i}: v\r\n`).join('');
    const raw = `${filler}From: "Mallory" <Mallory@Example.net>\r\nTo: a@example.com,\r\n b@example.com\r\nSubject: =?UTF-8?Q?caf=C3=A9?=\r\nMessage-ID: <m-1@example.net>\r\nReferences: <root@example.com> <r-2@example.com>\r\n\r\nbody\r\n`;
    const [m, took] = await cpuMs(() => readMail(Buffer.from(raw), place, limits));
    expect(took).to.be.below(2000);
    expect(m.fields).to.include({ id: 'm-1@example.net', uid: '7:42', from: '"Mallory" <Mallory@Example.net>', subject: 'café', body: '' });
    expect(m.fields.parseError).to.match(/header size.*only its main headers were read/);
    expect(m.sender).to.equal('mallory@example.net');
    expect(m.addresses).to.deep.equal(['mallory@example.net', 'a@example.com', 'b@example.com']);
    expect(m.threadIds).to.deep.equal(['root@example.com', 'r-2@example.com']);
  });

  it('turns deeply nested HTML into text in bounded work, without a stack overflow (100,000 nested <div>s)', async () => {
    for (const html of ['<div>'.repeat(100000) + 'deep' + '</div>'.repeat(100000), '<b>'.repeat(200000) + 'x']) {
      const raw = `From: a@example.com\r\nSubject: s\r\nContent-Type: text/html\r\n\r\n<p>Hello first.</p>${html}\r\n`;
      const [m, took] = await cpuMs(() => readMail(Buffer.from(raw), place, limits));
      expect(took).to.be.below(5000);
      expect(m.fields.body).to.include('Hello first.');
      expect(m.fields.parseError).to.equal(undefined);
      console.log(`      (${html.length} characters of nested HTML read in ${took} ms of CPU)`);
    }
  });

  it('a mail fetched only in part (over the 25 MiB fetched) says so in parseError, and keeps what was read', async () => {
    const raw = Buffer.from('From: a@example.com\r\nSubject: big\r\nMessage-ID: <big@example.com>\r\n\r\nThe start of a big mail.\r\n');
    const m = await readMail(raw, { ...place, size: 40 * 1024 * 1024 }, limits);
    expect(m.fields).to.include({ id: 'big@example.com', subject: 'big', body: 'The start of a big mail.' });
    expect(m.fields.parseError).to.equal(`the mail has ${40 * 1024 * 1024} bytes; only its first ${raw.length} were read`);
    expect((await readMail(raw, { ...place, size: raw.length }, limits)).fields.parseError).to.equal(undefined);
  });

  it('ids: ordinary ones stay readable; long, spaced, control or bidi ones become sha256:<hash>, the same for every mention', () => {
    expect(safeId('plain-1@example.com')).to.equal('plain-1@example.com');
    for (const bad of ['x'.repeat(181), 'a b@example.com', 'ctl\u0001@example.com', 'rlo\u202e@example.com', 'ls\u2028@example.com', 'é@example.com']) {
      expect(safeId(bad), JSON.stringify(bad)).to.match(/^sha256:[\w-]{43}$/);
    }
    expect(safeId('x'.repeat(300))).to.equal(safeId('x'.repeat(300)));
    expect(`hook:email:${safeId('x'.repeat(180))}`.length).to.be.at.most(200);
  });

  it('a long Message-ID is one key in References and in the mail itself', async () => {
    const long = `${'y'.repeat(290)}@example.com`;
    const root = await readMail(Buffer.from(`From: a@example.com\r\nMessage-ID: <${long}>\r\n\r\nx\r\n`), place, limits);
    const reply = await readMail(Buffer.from(`From: b@example.com\r\nMessage-ID: <r@example.com>\r\nReferences: <${long}>\r\n\r\ny\r\n`), place, limits);
    expect(reply.threadIds).to.deep.equal([root.fields.id]);
  });
});
