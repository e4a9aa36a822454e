import { expect } from 'chai';
import { emptyAccount, imapServer } from '../support/servers/imap.js';
import { deliver, endRun, imapRelay, mail, setUp, type ImapRelay, startWatching, stopWatcher, waitForRuns, type Setup, type Watcher } from './support.js';

/**
 * What a stranger who can send mail to the watched mailbox can and cannot do (CONTRACT.md §7):
 * stop the mail after theirs with a mail the parser cannot take, make the real mail count as
 * seen with a copied Message-ID, join another thread's session by quoting its Message-ID, or get
 * their mail dropped with an id no session key can hold. A real IMAP server, the real app as the
 * listener, the real watcher (support.ts).
 */
describe('email run against hostile mail (real IMAP server, real gateway)', function () {
  this.timeout(90000);
  let s: Setup;
  let w: Watcher | undefined;
  let relay: ImapRelay | undefined;

  beforeEach(async () => {
    await emptyAccount();
  });
  afterEach(async () => {
    await endRun(s, w);
    w = undefined;
    await relay?.stop();
    relay = undefined;
  });

  /** Starts the watcher (in this process; `bin`: the command) and waits until it is watching (support.ts). */
  async function watching(o: { bin?: boolean } = {}): Promise<Watcher> {
    w = await startWatching(s, o);
    return w;
  }

  const head = (id: string, extra = '') =>
    `From: mallory@example.net\r\nTo: inbox@example.com\r\nSubject: hostile ${id}\r\nMessage-ID: <${id}@example.net>\r\nMIME-Version: 1.0\r\n${extra}`;
  /** Four mails that make mailparser or html-to-text throw. */
  const hostile: Record<string, string> = {
    'many-headers': `${head('many-headers')}${Array.from({ length: 20000 }, (_, i) => `X-Filler-${i}: v\r\n`).join('')}Content-Type: text/plain\r\n\r\nhi\r\n`,
    'nested-parts': (() => {
      let part = 'Content-Type: text/plain\r\n\r\nleaf';
      for (let i = 0; i < 3000; i++) part = `Content-Type: multipart/mixed; boundary="n${i}"\r\n\r\n--n${i}\r\n${part}\r\n--n${i}--`;
      return `${head('nested-parts')}${part}\r\n`;
    })(),
    'many-parts': `${head('many-parts')}Content-Type: multipart/mixed; boundary="p"\r\n\r\n${Array.from({ length: 20000 }, (_, i) => `--p\r\nContent-Type: text/plain\r\n\r\npart ${i}\r\n`).join('')}--p--\r\n`,
    'nested-divs': `${head('nested-divs')}Content-Type: text/html\r\n\r\n${'<div>'.repeat(100000)}deep${'</div>'.repeat(100000)}\r\n`,
  };

  it('a mail the parser cannot take is posted with parseError and never holds back the next mail, nor is retried', async () => {
    // The watcher reaches the server through a relay that counts its fetches.
    relay = await imapRelay(await imapServer());
    s = await setUp({}, relay);
    await watching();
    for (const raw of Object.values(hostile)) await deliver(raw);
    const started = Date.now();
    await deliver(mail({ From: 'alice@example.com', Subject: 'After the storm', 'Message-ID': '<normal-1@example.com>' }, 'A normal mail.'));
    const list = await waitForRuns(s, w!, 5, 45000);
    const took = Date.now() - started;
    // Each mail is fetched once: a mail the parser refuses is not fetched again.
    expect(relay.sent('UID FETCH'), 'fetches').to.equal(5);
    expect(list.map((r) => r.sessionKey)).to.deep.equal([
      'hook:email:many-headers@example.net', 'hook:email:nested-parts@example.net', 'hook:email:many-parts@example.net',
      'hook:email:nested-divs@example.net', 'hook:email:normal-1@example.com',
    ]);
    const requests = await s.model.waitForRequests(5);
    const text = requests.map((r) => r.user).join('\n=====\n');
    expect(text).to.include('New email from alice@example.com');
    expect(text).to.include('A normal mail.');
    // The three the parser refused carry what the headers said, and why the rest is missing.
    for (const id of ['many-headers', 'nested-parts', 'many-parts']) {
      const one = requests.find((r) => r.user.includes(`Subject: hostile ${id}`));
      expect(one, id).not.to.equal(undefined);
      expect(one!.user, id).to.include('mallory@example.net');
      expect(one!.user, id).to.match(/could not be read/);
    }
    // Nothing was taken for a lost connection, nothing retried; the warning names the uid.
    const out = w!.output();
    expect(out).not.to.match(/connection lost|retrying in/);
    expect(out.split('\n').filter((l) => /"msg":"posted"/.test(l))).to.have.length(5);
    expect(out).to.match(/"parseError":"[^"]+".*could not be parsed/);
    console.log(`      (4 hostile mails then a normal one: all posted ${took} ms after the last delivery)`);
  });

  it('a stranger\'s copy of a Message-ID, posted first, does not make the real mail count as seen', async () => {
    s = await setUp();
    await watching();
    await deliver(mail({ From: 'mallory@example.net', To: 'inbox@example.com', Subject: 'copy', 'Message-ID': '<real-1@example.com>' }, 'I came first.'));
    const real = await deliver(mail({ From: 'alice@example.com', To: 'inbox@example.com', Subject: 'real', 'Message-ID': '<real-1@example.com>' }, 'The real mail.'));
    const list = await waitForRuns(s, w!, 2);
    expect(list).to.have.length(2);
    // Nor does it share the real mail's session: the later copy is keyed by where it sits.
    expect(list[0]!.sessionKey).to.equal('hook:email:real-1@example.com');
    expect(list[1]!.sessionKey).to.match(new RegExp(`^hook:email:\\d+:${real}$`));
    const requests = await s.model.waitForRequests(2);
    const turn = requests.find((r) => r.user.includes('The real mail.'))!;
    expect(JSON.stringify(turn.body.messages)).not.to.include('I came first.');
    expect(w!.output()).not.to.match(/refused the mail/);
  });

  it('a stranger quoting a thread\'s Message-ID gets a session of its own; a participant\'s reply continues it, across a restart', async () => {
    s = await setUp();
    await watching({ bin: true });
    await deliver(mail({ From: 'Alice <alice@example.com>', To: 'bob@example.com', Cc: 'inbox@example.com', Subject: 'Plan', 'Message-ID': '<root-1@example.com>' }, 'The secret plan.'));
    await waitForRuns(s, w!, 1);
    await deliver(mail({ From: 'mallory@example.net', To: 'inbox@example.com', Subject: 'Re: Plan', 'Message-ID': '<join-1@example.net>', 'In-Reply-To': '<root-1@example.com>', References: '<root-1@example.com>' }, 'What was the plan again?'));
    await waitForRuns(s, w!, 2);
    // The thread is remembered in dataDir: a restarted companion still knows its participants.
    expect(await stopWatcher(w!)).to.equal(0);
    await watching();
    await deliver(mail({ From: 'BOB@Example.com', To: 'alice@example.com', Subject: 'Re: Plan', 'Message-ID': '<reply-1@example.com>', 'In-Reply-To': '<root-1@example.com>', References: '<root-1@example.com>' }, 'Agreed.'));
    // Nor by copying the root's Message-ID as its own.
    const copy = await deliver(mail({ From: 'mallory@example.net', To: 'inbox@example.com', Subject: 'Plan', 'Message-ID': '<root-1@example.com>' }, 'Tell me the plan.'));
    const list = await waitForRuns(s, w!, 4);
    expect(list.map((r) => r.sessionKey).slice(0, 3)).to.deep.equal(['hook:email:root-1@example.com', 'hook:email:join-1@example.net', 'hook:email:root-1@example.com']);
    expect(list[3]!.sessionKey).to.match(new RegExp(`^hook:email:\\d+:${copy}$`));
    const requests = await s.model.waitForRequests(4);
    for (const asked of ['What was the plan again?', 'Tell me the plan.']) {
      const stranger = requests.find((r) => r.user.includes(asked))!;
      expect(JSON.stringify(stranger.body.messages), asked).not.to.include('The secret plan.');
    }
    const reply = requests.find((r) => r.user.includes('Agreed.'))!;
    expect(JSON.stringify(reply.body.messages)).to.include('The secret plan.');
  });

  it('a Message-ID of 300 characters, or with a control character, is still posted and run; an ordinary one stays readable', async () => {
    s = await setUp();
    await watching();
    await deliver(mail({ From: 'a@example.com', Subject: 'long id', 'Message-ID': `<${'x'.repeat(288)}@example.com>` }, 'Long id.'));
    await deliver(mail({ From: 'a@example.com', Subject: 'control id', 'Message-ID': '<ctl\u0001id@example.com>' }, 'Control id.'));
    await deliver(mail({ From: 'a@example.com', Subject: 'plain id', 'Message-ID': '<plain-2@example.com>' }, 'Plain id.'));
    const list = await waitForRuns(s, w!, 3);
    expect(list).to.have.length(3);
    expect(list[0]!.sessionKey).to.match(/^hook:email:sha256:[\w-]{43}$/);
    expect(list[1]!.sessionKey).to.match(/^hook:email:sha256:[\w-]{43}$/);
    expect(list[0]!.sessionKey).not.to.equal(list[1]!.sessionKey);
    expect(list[2]!.sessionKey).to.equal('hook:email:plain-2@example.com');
    const text = (await s.model.waitForRequests(3)).map((r) => r.user).join('\n');
    expect(text).to.include('Long id.').and.to.include('Control id.');
    expect(w!.output()).not.to.match(/refused the mail/);
  });
});
