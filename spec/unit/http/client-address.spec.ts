import type { IncomingMessage } from 'node:http';
import { expect } from 'chai';
import { createClientAddress } from '../../../src/http/client-address.js';
import { fold } from '../../../src/address-rules.js';
import { createAuth } from '../../../src/http/auth.js';

const req = (remoteAddress: string, xff?: string) =>
  ({ socket: { remoteAddress }, headers: xff === undefined ? {} : { 'x-forwarded-for': xff } }) as unknown as IncomingMessage;

describe('http/client-address', () => {
  it('folds ::ffff:-mapped IPv4 addresses', () => {
    expect(fold('::ffff:1.2.3.4')).to.equal('1.2.3.4');
    expect(fold('::1')).to.equal('::1');
    expect(createClientAddress([])(req('::ffff:10.0.0.7'))).to.equal('10.0.0.7');
  });

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy', () => {
    expect(createClientAddress([])(req('203.0.113.9', '1.1.1.1'))).to.equal('203.0.113.9');
    expect(createClientAddress(['10.0.0.1'])(req('203.0.113.9', '1.1.1.1'))).to.equal('203.0.113.9');
  });

  it('takes the right-most untrusted X-Forwarded-For hop behind trusted proxies (exact or CIDR, mapped or not)', () => {
    const addr = createClientAddress(['10.0.0.0/8', '192.0.2.1']);
    expect(addr(req('::ffff:10.1.2.3', 'spoofed, 198.51.100.7, 192.0.2.1'))).to.equal('198.51.100.7');
    expect(addr(req('192.0.2.1', '198.51.100.8'))).to.equal('198.51.100.8');
    expect(addr(req('192.0.2.1'))).to.equal('192.0.2.1');
    expect(addr(req('192.0.2.1', '10.0.0.2, 10.0.0.3'))).to.equal('192.0.2.1');
  });
});

describe('http/auth: the failure budget', () => {
  const r = (token?: string) => ({ headers: token ? { authorization: `Bearer ${token}` } : {} }) as unknown as IncomingMessage;

  it('counts per address within 60 s, blocks from the 21st failure, and forgets after the window', () => {
    let now = 1_000_000;
    const { check } = createAuth({ hooks: [{ token: 'right' }], admin: [] }, true, () => now);
    for (let i = 0; i < 20; i++) expect(check(r('x'), '', 'a', 'hooks').ok).to.equal(false);
    const v = check(r('x'), '', 'a', 'hooks');
    expect(v).to.deep.include({ ok: false, code: 'rate_limited' });
    expect(check(r('x'), '', 'b', 'hooks')).to.deep.include({ code: 'unauthorized' });
    now += 60_001;
    expect(check(r('x'), '', 'a', 'hooks')).to.deep.include({ code: 'unauthorized' });
  });

  it('reads the query token only when allowed', () => {
    expect(createAuth({ hooks: [{ token: 'right' }], admin: [] }, true).check(r(), 'token=right', 'a', 'hooks').ok).to.equal(true);
    expect(createAuth({ hooks: [{ token: 'right' }], admin: [] }, false).check(r(), 'token=right', 'a', 'hooks').ok).to.equal(false);
  });
});
