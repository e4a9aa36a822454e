import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { tmpDir } from '../support/gateway.js';
import { MAX_PARTICIPANTS, MAX_THREADS, openThreads } from '../../src/email/threads.js';

/** The companion's memory of thread participants (CONTRACT.md §7): who may continue a thread, bounded. */
describe('email threads (participants kept in dataDir)', () => {
  const BOX = 'hookrelay@imap:143/INBOX';

  it('continues a thread only for a participant, and remembers it across a reopen', () => {
    const dir = tmpDir('email-threads-');
    const t = openThreads(dir, BOX);
    t.record('root@example.com', ['alice@example.com', 'bob@example.com']);
    expect(t.continued(['root@example.com'], 'bob@example.com')).to.equal('root@example.com');
    expect(t.continued(['root@example.com'], 'mallory@example.net')).to.equal(undefined);
    expect(t.continued(['unknown@example.com'], 'bob@example.com')).to.equal(undefined);
    expect(t.continued(['root@example.com'], undefined)).to.equal(undefined);
    // The first thread named that the sender took part in wins.
    t.record('other@example.com', ['carol@example.com']);
    expect(t.continued(['root@example.com', 'other@example.com'], 'carol@example.com')).to.equal('other@example.com');
    // A mail whose own Message-ID names a known thread is that thread's only for a participant.
    expect(t.takenFrom('root@example.com', 'mallory@example.net')).to.equal(true);
    expect(t.takenFrom('root@example.com', undefined)).to.equal(true);
    expect(t.takenFrom('root@example.com', 'alice@example.com')).to.equal(false);
    expect(t.takenFrom('new@example.com', 'mallory@example.net')).to.equal(false);
    const again = openThreads(dir, BOX);
    expect(again.continued(['root@example.com'], 'alice@example.com')).to.equal('root@example.com');
    // Another mailbox of the same dataDir has threads of its own.
    expect(openThreads(dir, 'other@imap:143/INBOX').continued(['root@example.com'], 'alice@example.com')).to.equal(undefined);
    // No address or id in clear at rest.
    const text = fs.readFileSync(path.join(dir, 'email-threads.json'), 'utf8');
    expect(text).not.to.match(/example|root/);
  });

  // Each record is saved with fsync (progress.ts writeAtomic): a thousand of them go to a
  // memory file system where there is one (Linux's /dev/shm, where fsync returns at once).
  const memoryDir = () => (fs.existsSync('/dev/shm') ? fs.mkdtempSync(path.join('/dev/shm', 'email-threads-')) : tmpDir('email-threads-'));
  let inMemory: string | undefined;
  after(() => {
    if (inMemory) fs.rmSync(inMemory, { recursive: true, force: true });
  });

  it('stays bounded whatever strangers send: the oldest thread is forgotten first, a thread keeps its first participants', () => {
    const dir = (inMemory = memoryDir());
    const t = openThreads(dir, BOX);
    t.record('first@example.com', ['alice@example.com']);
    t.record('kept@example.com', ['bob@example.com']);
    for (let i = 0; i < MAX_THREADS - 1; i++) {
      if (i === 10) t.record('kept@example.com', ['bob@example.com']); // used again: moves to the newest end
      t.record(`flood-${i}@example.net`, Array.from({ length: 100 }, (_, j) => `cc-${i}-${j}@example.net`));
    }
    expect(t.continued(['first@example.com'], 'alice@example.com'), 'the oldest is forgotten').to.equal(undefined);
    expect(t.continued(['kept@example.com'], 'bob@example.com'), 'a thread used since is kept').to.equal('kept@example.com');
    t.record('kept@example.com', Array.from({ length: 100 }, (_, j) => `late-${j}@example.net`));
    expect(t.continued(['kept@example.com'], 'bob@example.com')).to.equal('kept@example.com');
    expect(t.continued(['kept@example.com'], 'late-99@example.net')).to.equal(undefined);
    const saved = JSON.parse(fs.readFileSync(path.join(dir, 'email-threads.json'), 'utf8'))[BOX] as [string, string[]][];
    expect(saved).to.have.length(MAX_THREADS);
    expect(Math.max(...saved.map(([, who]) => who.length))).to.equal(MAX_PARTICIPANTS);
    const size = fs.statSync(path.join(dir, 'email-threads.json')).size;
    expect(size).to.be.below(500 * 1024);
    console.log(`      (a full file: ${MAX_THREADS} threads × ${MAX_PARTICIPANTS} participants = ${Math.round(size / 1024)} KiB)`);
  });
});
