import { expect } from 'chai';
import { until } from '../support/gateway.js';
import { emptyAccount, imapClient, imapServer, startImapServerWithoutIdle, uidValidity } from '../support/servers/imap.js';
import { deliver, endRun, mail, imapRelay, runs, setUp, startListener, startWatcher, startWatcherHere, startWatching, stopWatcher, waitForRuns, type Setup, type Watcher } from './support.js';

/**
 * `hookrelay email run` against a real IMAP server and the real app as the listener
 * (CONTRACT.md §7; support.ts says which tests start the command): mail is delivered with IMAP
 * APPEND, and what reached the hook is read back as the gateway's runs and the fake model's requests.
 */
describe('email run (real IMAP server, real gateway)', function () {
  this.timeout(60000);
  let s: Setup;
  let w: Watcher | undefined;

  beforeEach(async () => {
    await emptyAccount();
  });
  afterEach(async () => {
    await endRun(s, w);
    w = undefined;
  });

  /** Starts the watcher (in this process; `bin`: the command) and waits until it is watching (support.ts). */
  async function watching(o: { bin?: boolean; args?: string[] } = {}): Promise<Watcher> {
    w = await startWatching(s, o);
    return w;
  }
  const userMessages = () => s.model.requests.map((r) => r.user);

  it('posts each new mail once with its fields: plain, HTML-only, multipart with an attachment, ISO-8859-1, no Message-ID', async () => {
    s = await setUp();
    await watching();
    await deliver(mail({ From: 'Alice <alice@example.com>', Subject: 'Plain one', 'Message-ID': '<plain-1@example.com>' }, 'Hello in plain text.\nSecond line.'));
    await deliver(mail({ From: 'bob@example.com', Subject: 'HTML only', 'Message-ID': '<html-1@example.com>', 'MIME-Version': '1.0', 'Content-Type': 'text/html; charset=utf-8' },
      '<html><body><h1>Big news</h1><p>Read <b>this</b> <a href="https://example.com/x">link</a></p><script>x()</script></body></html>'));
    await deliver(mail({ From: 'carol@example.com', Subject: 'With attachment', 'Message-ID': '<multi-1@example.com>', 'MIME-Version': '1.0', 'Content-Type': 'multipart/mixed; boundary="b1"' },
      '--b1\nContent-Type: text/plain; charset=utf-8\n\nSee the attached report.\n--b1\nContent-Type: application/pdf; name="r.pdf"\nContent-Disposition: attachment; filename="r.pdf"\nContent-Transfer-Encoding: base64\n\nU0VDUkVULVBERi1CWVRFUw==\n--b1--'));
    const latin1 = Buffer.concat([
      Buffer.from(mail({ From: 'dan@example.com', Subject: '=?ISO-8859-1?Q?Caf=E9?=', 'Message-ID': '<latin-1@example.com>', 'MIME-Version': '1.0', 'Content-Type': 'text/plain; charset=ISO-8859-1', 'Content-Transfer-Encoding': '8bit' }, 'XX').replace('XX\r\n', '')),
      Buffer.from([0x43, 0x61, 0x66, 0xe9, 0x20, 0x63, 0x72, 0xe8, 0x6d, 0x65, 0x0d, 0x0a]), // "Café crème" in ISO-8859-1
    ]);
    await deliver(latin1);
    const noIdUid = await deliver(mail({ From: 'eve@example.com', Subject: 'No id' }, 'A mail without a Message-ID.'));
    const validity = await uidValidity();

    const list = await waitForRuns(s, w!, 5);
    expect(list.map((r) => r.sessionKey)).to.deep.equal([
      'hook:email:plain-1@example.com',
      'hook:email:html-1@example.com',
      'hook:email:multi-1@example.com',
      'hook:email:latin-1@example.com',
      `hook:email:${validity}:${noIdUid}`,
    ]);
    expect(list.every((r) => r.name === 'Email')).to.equal(true);
    await s.model.waitForRequests(5);
    const text = userMessages().join('\n=====\n');
    // The snippet is the whole short body: it is left out, not shown twice.
    expect(text).to.include('New email from "Alice" <alice@example.com>\nSubject: Plain one\nHello in plain text.\nSecond line.');
    expect(text).to.include('Subject: HTML only');
    expect(text).to.match(/BIG NEWS|Big news/);
    expect(text).to.include('Read this link [https://example.com/x]');
    expect(text).not.to.match(/<b>|<p>|x\(\)/);
    expect(text).to.include('See the attached report.');
    expect(text).not.to.include('U0VDUkVU');
    expect(text).not.to.include('SECRET-PDF');
    expect(text).to.include('Subject: Café\nCafé crème');
    expect(text).to.include('New email from eve@example.com\nSubject: No id');
    // Nothing was posted twice, and the log says what happened without the mails' contents.
    expect(w!.output()).to.match(/"msg":"posted"/);
    expect(w!.output()).not.to.match(/Plain one|Hello in plain|Café|crème|secret/i);
  });

  it('a participant\'s reply (In-Reply-To / References) lands in the session of the mail it answers; a reply to a thread never posted is its own', async () => {
    s = await setUp();
    await watching();
    // Bob is in To of the root: he took part in the thread, so his reply continues it.
    await deliver(mail({ From: 'alice@example.com', To: 'bob@example.com', Subject: 'Lunch?', 'Message-ID': '<root@example.com>' }, 'Lunch on Friday?'));
    await deliver(mail({ From: 'bob@example.com', Subject: 'Re: Lunch?', 'Message-ID': '<reply-1@example.com>', 'In-Reply-To': '<root@example.com>', References: '<root@example.com>' }, 'Yes!'));
    await deliver(mail({ From: 'alice@example.com', Subject: 'Re: Lunch?', 'Message-ID': '<reply-2@example.com>', 'In-Reply-To': '<reply-1@example.com>', References: '<root@example.com> <reply-1@example.com>' }, 'Great.'));
    await deliver(mail({ From: 'carol@example.com', Subject: 'Re: other', 'Message-ID': '<reply-3@example.com>', 'In-Reply-To': '<other@example.com>' }, 'Only In-Reply-To.'));
    const list = await waitForRuns(s, w!, 4);
    expect(list.map((r) => r.sessionKey)).to.deep.equal([
      'hook:email:root@example.com', 'hook:email:root@example.com', 'hook:email:root@example.com', 'hook:email:reply-3@example.com',
    ]);
    // The later turns of the thread carry the earlier ones: one conversation.
    const last = await until('the turn of the reply "Great."', () => s.model.requests.find((r) => r.user.includes('Great.')), 10000);
    expect(JSON.stringify(last.body.messages)).to.include('Lunch on Friday?');
  });

  it('first run starts from now; --backfill N posts the last N once; mail in Sent is never posted', async () => {
    s = await setUp();
    for (const n of [1, 2, 3]) await deliver(mail({ From: 'old@example.com', Subject: `old ${n}`, 'Message-ID': `<old-${n}@example.com>` }, 'before'));
    await watching({ bin: true, args: ['--backfill', '2'] });
    await deliver(mail({ From: 'me@example.com', Subject: 'sent by me', 'Message-ID': '<sent-1@example.com>' }, 'mine'), 'Sent');
    await deliver(mail({ From: 'me@example.com', Subject: 'a draft', 'Message-ID': '<draft-1@example.com>' }, 'draft'), 'Drafts');
    await deliver(mail({ From: 'new@example.com', Subject: 'new', 'Message-ID': '<new-1@example.com>' }, 'after'));
    const list = await waitForRuns(s, w!, 3);
    expect(list.map((r) => r.sessionKey)).to.deep.equal(['hook:email:old-2@example.com', 'hook:email:old-3@example.com', 'hook:email:new-1@example.com']);
    // A restart does not backfill again.
    await stopWatcher(w!);
    await watching({ bin: true, args: ['--backfill', '2'] });
    await deliver(mail({ From: 'new@example.com', Subject: 'new 2', 'Message-ID': '<new-2@example.com>' }, 'after'));
    expect((await waitForRuns(s, w!, 4)).map((r) => r.sessionKey).slice(3)).to.deep.equal(['hook:email:new-2@example.com']);
  });

  it('polls a server without IDLE (every hooks.email.pollSeconds) and posts new mail once', async () => {
    const noIdle = await startImapServerWithoutIdle();
    // The watcher reaches it through a relay that counts its polls.
    const relay = await imapRelay(noIdle);
    try {
      const c = await imapClient(noIdle);
      expect(c.capabilities.has('IDLE'), 'the spec server must leave IDLE out').to.equal(false);
      await c.logout();
      s = await setUp({ pollSeconds: 1 }, relay);
      await watching();
      expect(w!.output()).to.match(/"idle":false/);
      await deliver(mail({ From: 'carol@example.com', Subject: 'Polled', 'Message-ID': '<polled-1@example.com>' }, 'Found by a poll.'), 'INBOX', noIdle);
      const [run] = await waitForRuns(s, w!, 1, 10000);
      expect(run!.sessionKey).to.equal('hook:email:polled-1@example.com');
      await deliver(mail({ From: 'carol@example.com', Subject: 'Polled again', 'Message-ID': '<polled-2@example.com>' }, 'And another.'), 'INBOX', noIdle);
      await waitForRuns(s, w!, 2, 10000);
      // Two more polls answered: imapflow sends the next NOOP once the last one's answer is handled.
      const polls = relay.sent('NOOP');
      await until('two more polls', () => relay.sent('NOOP') >= polls + 3, 10000);
      expect((await runs(s.gateway)).map((r) => r.sessionKey).sort()).to.deep.equal(['hook:email:polled-1@example.com', 'hook:email:polled-2@example.com']);
    } finally {
      if (w) await stopWatcher(w, 'SIGKILL');
      w = undefined;
      await relay.stop();
      await noIdle.stop();
    }
  });

  it('refuses to watch a special-use folder (\\Sent), by its flag, with a clear message and exit 1', async () => {
    s = await setUp({ mailbox: 'Sent' });
    w = startWatcher(s.gateway.configFile);
    expect(await w.exited).to.equal(1);
    expect(w.output()).to.match(/Sent is the account's Sent folder, whose mail is never posted/);
  });

  it('a wrong password fails fast with a clear message and a non-zero exit', async () => {
    s = await setUp();
    w = startWatcher(s.gateway.configFile, [], 'wrong-password');
    expect(await w.exited).to.equal(1);
    // Fast: a refused login is final, never retried like a lost connection.
    expect(w.output()).not.to.match(/retrying in/);
    expect(w.output()).to.match(/refused the login of hookrelay: check the user and the password in \$IMAP_SPEC_PASSWORD/);
    expect(w.output()).not.to.include('wrong-password');
  });

  it('exactly once across a SIGKILL of the watcher', async () => {
    s = await setUp();
    await watching({ bin: true });
    for (const n of [1, 2, 3, 4]) await deliver(mail({ From: 'a@example.com', Subject: `k${n}`, 'Message-ID': `<kill-${n}@example.com>` }, `mail ${n}`));
    await w!.waitFor(/"msg":"posted"/, 1);
    await stopWatcher(w!, 'SIGKILL');
    await deliver(mail({ From: 'a@example.com', Subject: 'k5' }, 'mail 5, no Message-ID'));
    await watching();
    const list = await waitForRuns(s, w!, 5);
    expect(list).to.have.length(5);
    expect(new Set(list.map((r) => r.sessionKey)).size).to.equal(5);
  });

  it('exactly once across a listener outage: retries with back-off, then catches up in UID order', async () => {
    s = await setUp();
    await watching();
    await deliver(mail({ From: 'a@example.com', Subject: 'o1', 'Message-ID': '<out-1@example.com>' }, 'one'));
    await waitForRuns(s, w!, 1);
    await s.gateway.stop();
    await deliver(mail({ From: 'a@example.com', Subject: 'o2', 'Message-ID': '<out-2@example.com>' }, 'two'));
    await deliver(mail({ From: 'a@example.com', Subject: 'o3' }, 'three, no Message-ID'));
    await w!.waitFor(/retrying in/);
    s.gateway = await startListener(s.config, s.dir);
    const list = await waitForRuns(s, w!, 3, 20000);
    expect(list.map((r) => r.sessionKey).slice(0, 2)).to.deep.equal(['hook:email:out-1@example.com', 'hook:email:out-2@example.com']);
    expect(list).to.have.length(3);
  });

  it('exactly once across a dropped IMAP connection (the server kicks the user): reconnects and posts what came meanwhile', async () => {
    s = await setUp();
    await watching();
    await deliver(mail({ From: 'a@example.com', Subject: 'd1', 'Message-ID': '<drop-1@example.com>' }, 'one'));
    await waitForRuns(s, w!, 1);
    (await imapServer()).kick();
    await deliver(mail({ From: 'a@example.com', Subject: 'd2', 'Message-ID': '<drop-2@example.com>' }, 'two'));
    await w!.waitFor(/"msg":"connected"/, 2);
    await deliver(mail({ From: 'a@example.com', Subject: 'd3', 'Message-ID': '<drop-3@example.com>' }, 'three'));
    const list = await waitForRuns(s, w!, 3);
    expect(list.map((r) => r.sessionKey)).to.deep.equal(['hook:email:drop-1@example.com', 'hook:email:drop-2@example.com', 'hook:email:drop-3@example.com']);
  });

  it('a UIDVALIDITY change neither re-posts what was posted nor skips what came meanwhile', async () => {
    s = await setUp();
    await watching({ bin: true });
    await deliver(mail({ From: 'a@example.com', Subject: 'u1', 'Message-ID': '<uv-1@example.com>' }, 'one'));
    // No Message-ID: its id is <UIDVALIDITY>:<UID>, which the renumbering changes, so only
    // the watcher (not the listener's key) can keep it from being posted again.
    await deliver(mail({ From: 'a@example.com', Subject: 'u2' }, 'two'));
    await waitForRuns(s, w!, 2);
    expect(await stopWatcher(w!)).to.equal(0); // SIGTERM: a clean stop
    const before = await uidValidity();
    (await imapServer()).renumber(before + 1000);
    await deliver(mail({ From: 'a@example.com', Subject: 'u3', 'Message-ID': '<uv-3@example.com>' }, 'three'));
    const u4 = await deliver(mail({ From: 'a@example.com', Subject: 'u4' }, 'four'));
    w = startWatcherHere(s);
    await w.waitFor(/renumbered/);
    const list = await waitForRuns(s, w!, 4);
    expect(list).to.have.length(4);
    expect(list[2]!.sessionKey).to.equal('hook:email:uv-3@example.com');
    expect(list[3]!.sessionKey).to.equal(`hook:email:${before + 1000}:${u4}`);
    expect((await runs(s.gateway)).length).to.equal(4);
  });
});
