import type { IncomingMessage } from 'node:http';
import { expect } from 'chai';
import { MAX_TOKENS } from '../../../src/config/schema.js';
import { createAuth } from '../../../src/http/auth.js';

const r = (token?: string) => ({ headers: token === undefined ? {} : { authorization: `Bearer ${token}` } }) as unknown as IncomingMessage;

/** The two kinds of credential and scoped hooks tokens, at the comparison (CONTRACT.md §4). */
describe('http/auth: two kinds of credential', () => {
  it('a hooks token passes where a hooks token is taken, the admin token where it is; either where no route exists', () => {
    const auth = createAuth({ hooks: [{ token: 'hooks-1' }], admin: ['admin-1'] }, true);
    expect(auth.check(r('hooks-1'), '', 'a', 'hooks').ok).to.equal(true);
    expect(auth.check(r('admin-1'), '', 'a', 'admin').ok).to.equal(true);
    expect(auth.check(r('hooks-1'), '', 'a', 'admin')).to.deep.equal({ ok: false, code: 'unauthorized' });
    expect(auth.check(r('admin-1'), '', 'a', 'hooks')).to.deep.equal({ ok: false, code: 'unauthorized' });
    expect(auth.check(r('hooks-1'), '', 'a', 'either').ok).to.equal(true);
    expect(auth.check(r('admin-1'), '', 'a', 'either').ok).to.equal(true);
    expect(auth.check(r('neither'), '', 'a', 'either').ok).to.equal(false);
    expect(auth.verify('admin-1', 'a', 'admin').ok).to.equal(true);
    expect(auth.verify('hooks-1', 'a', 'admin').ok).to.equal(false);
  });

  it('counts a wrong-kind credential as a failed attempt; only the right kind resets the count', () => {
    const auth = createAuth({ hooks: [{ token: 'hooks-1' }], admin: ['admin-1'] }, true, () => 1_000);
    for (let i = 0; i < 20; i++) expect(auth.check(r(i % 2 ? 'hooks-1' : 'admin-1'), '', 'a', i % 2 ? 'admin' : 'hooks').ok).to.equal(false);
    expect(auth.check(r('hooks-1'), '', 'a', 'admin')).to.deep.include({ code: 'rate_limited' });
    expect(auth.check(r('admin-1'), '', 'a', 'admin').ok).to.equal(true); // never blocked, and resets
    expect(auth.check(r('hooks-1'), '', 'a', 'admin')).to.deep.include({ code: 'unauthorized' });
  });

  it('keeps one budget for every kind, of which a right credential clears only its own kind\'s share (CONTRACT.md §4)', () => {
    let now = 1_000;
    const auth = createAuth({ hooks: [{ token: 'hooks-1' }], admin: ['admin-1'] }, true, () => now);
    for (let i = 0; i < 5; i++) {
      auth.failed('a', 'verifyToken');
      expect(auth.check(r('guess'), '', 'a', 'admin').ok).to.equal(false);
      expect(auth.check(r('guess'), '', 'a', 'hooks').ok).to.equal(false);
      expect(auth.check(r('guess'), '', 'a', 'either').ok).to.equal(false);
    }
    expect(auth.failed('a', 'hooks')).to.deep.include({ code: 'rate_limited' }); // the 21st, whatever its kind
    // A right hooks token clears the 6 hooks failures: 15 of the others remain.
    expect(auth.check(r('hooks-1'), '', 'a', 'hooks').ok).to.equal(true);
    expect(auth.failed('a', 'admin')).to.deep.include({ code: 'unauthorized' }); // 16
    expect(auth.verify('admin-1', 'a', 'admin').ok).to.equal(true); // clears the 6 admin failures: 10 left
    auth.passed('a', 'verifyToken'); // 5 left: the either guesses, which no credential clears
    expect(auth.check(r('hooks-1'), '', 'a', 'either').ok).to.equal(true);
    expect(auth.check(r('admin-1'), '', 'a', 'either').ok).to.equal(true);
    for (let i = 6; i <= 20; i++) expect(auth.failed('a', 'hooks').ok, `failure ${i}`).to.equal(false);
    expect(auth.failed('a', 'admin')).to.deep.include({ code: 'rate_limited' });
    // Each kind's window ends on its own: Retry-After waits for the last of them.
    now += 30_000;
    expect(auth.failed('a', 'verifyToken')).to.deep.include({ code: 'rate_limited', retryAfter: 60 });
    now += 30_001;
    expect(auth.failed('a', 'admin')).to.deep.include({ code: 'unauthorized' });
  });

  it('tells which scoped entry matched, in every slot, with its name and routes (and nothing for a plain token)', () => {
    const hooks = Array.from({ length: MAX_TOKENS }, (_, i) => (i === 0 ? { token: 'plain' } : { token: `t-${i}`, name: `sender-${i}`, routes: ['wake', `m${i}`] }));
    const auth = createAuth({ hooks, admin: [] }, true);
    expect(auth.check(r('plain'), '', 'a', 'hooks')).to.deep.equal({ ok: true });
    for (let i = 1; i < MAX_TOKENS; i++) {
      const v = auth.check(r(`t-${i}`), '', 'a', 'hooks');
      expect(v.ok && v.sender?.name, `slot ${i}`).to.equal(`sender-${i}`);
      expect(v.ok && [...v.sender!.routes!], `slot ${i}`).to.deep.equal(['wake', `m${i}`]);
    }
  });

  it('never matches an empty or unconfigured token (no admin token configured: nothing reads)', () => {
    const auth = createAuth({ hooks: [{ token: '' }], admin: [] }, true);
    for (const kind of ['hooks', 'admin', 'either'] as const) {
      expect(auth.check(r(''), '', `a-${kind}`, kind).ok, kind).to.equal(false);
      expect(auth.check(r('   '), '', `b-${kind}`, kind).ok, kind).to.equal(false);
      expect(auth.verify('', `c-${kind}`, kind).ok, kind).to.equal(false);
    }
  });

  it('refuses more than the slots of either kind', () => {
    const many = Array.from({ length: MAX_TOKENS + 1 }, (_, i) => `t${i}`);
    expect(() => createAuth({ hooks: many.map((token) => ({ token })), admin: [] }, true)).to.throw(/at most/);
    expect(() => createAuth({ hooks: [], admin: many }, true)).to.throw(/at most/);
  });
});
