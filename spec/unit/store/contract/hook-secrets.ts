import { expect } from 'chai';
import { storesFor, type Harness, type TestStore } from './harness.js';

/** A handshake's secret kept per mapping (Asana's X-Hook-Secret, CONTRACT.md §15). */
export function hookSecretsContract(h: Harness): void {
  describe('hook secrets', function () {
    this.timeout(30000);
    let store: TestStore;
    const open = storesFor(h);
    beforeEach(async () => {
      store = await open();
    });

    it('keeps the first secret of a mapping; a second one only with replace', async () => {
      expect(await store.hookSecret('asana')).to.equal(undefined);
      expect(await store.keepHookSecret('asana', 'first', false)).to.equal('first');
      expect(await store.keepHookSecret('asana', 'second', false)).to.equal('first');
      expect(await store.hookSecret('asana')).to.equal('first');
      expect(await store.keepHookSecret('asana', 'second', true)).to.equal('second');
      expect(await store.hookSecret('asana')).to.equal('second');
    });

    it('keeps one per mapping, and across a reopen and for another instance', async () => {
      await store.keepHookSecret('a', 'secret-a', false);
      await store.keepHookSecret('b', 'secret-b', false);
      await store.close();
      store = await open();
      expect([await store.hookSecret('a'), await store.hookSecret('b'), await store.hookSecret('c')]).to.deep.equal(['secret-a', 'secret-b', undefined]);
      const other = await h.openOther();
      try {
        // Two handshakes racing on two instances: one secret wins, and both see it.
        const [x, y] = await Promise.all([other.keepHookSecret('c', 'from-other', false), store.keepHookSecret('c', 'from-this', false)]);
        expect(x).to.equal(y);
        expect(await other.hookSecret('c')).to.equal(x);
      } finally {
        await other.close();
      }
    });
  });
}
