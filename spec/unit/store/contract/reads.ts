import { expect } from 'chai';
import { storesFor, type Harness, type TestStore } from './harness.js';
import type { NewEvent } from '../../../../src/store/records.js';

const ev = (id: string, text = `text ${id}`): NewEvent => ({
  id, kind: 'wake', text, source: 'wake', at: '2025-01-01T00:00:00.000Z', unsafe: false,
});

/** reads */
export function readsContract(h: Harness): void {
  describe('reads', function () {
    this.timeout(30000);
    let store: TestStore;
    const open = storesFor(h);
    beforeEach(async () => {
      store = await open();
    });

    describe('listEvents with a byte budget', () => {
      const KB100 = 100 * 1024;
      const MIB = 1024 * 1024;

      it('bounds a page of large events by the budget, not by the limit, and pages through each exactly once', async () => {
        const n = 64; // 6.4 MB in all
        for (let i = 0; i < n; i += 16) {
          await store.accept(Array.from({ length: 16 }, (_, j) => ev(`e${i + j}`, String(i + j).padEnd(KB100, 'x'))), []);
        }
        const page = await store.listEvents(0, 1000, MIB);
        expect(page.length).to.be.at.least(1).and.at.most(10);
        expect(page.reduce((s, e) => s + e.text.length, 0)).to.be.at.most(MIB);
        expect(page.map((e) => e.id)).to.deep.equal(Array.from({ length: page.length }, (_, i) => `e${i}`));

        const seen: string[] = [];
        let pages = 0;
        for (let after = 0; ; pages++) {
          const p = await store.listEvents(after, 1000, MIB);
          if (p.length === 0) break;
          seen.push(...p.map((e) => e.id));
          after = p[p.length - 1]!.seq;
        }
        expect(seen).to.deep.equal(Array.from({ length: n }, (_, i) => `e${i}`));
        expect(pages).to.be.at.least(Math.ceil((n * KB100) / MIB));
        // Without a budget the limit alone still decides, as before.
        expect(await store.listEvents(0, 1000)).to.have.length(n);
      });

      it('always returns at least one event, even one larger than the budget', async () => {
        await store.accept([ev('big', 'y'.repeat(2 * KB100)), ev('small')], []);
        const first = await store.listEvents(0, 1000, KB100);
        expect(first.map((e) => e.id)).to.deep.equal(['big']);
        expect((await store.listEvents(first[0]!.seq, 1000, KB100)).map((e) => e.id)).to.deep.equal(['small']);
        expect((await store.listEvents(0, 1000, 0)).map((e) => e.id)).to.deep.equal(['big']);
      });

      it('counts multi-byte text in UTF-8 bytes', async () => {
        const euro = '€'.repeat(40 * 1024); // 40 Ki characters, 120 KiB of UTF-8
        await store.accept([ev('a', euro), ev('b', euro)], []);
        expect((await store.listEvents(0, 10, 200 * 1024)).map((e) => e.id)).to.deep.equal(['a']);
      });
    });

    it('long reads hold up neither the event loop nor an accept: they run on connections of their own', async () => {
      const rows = 2000;
      const values = `n, '2025-01-01T00:00:00.000Z', 'POST', '/hooks/wake', 'wake', 200, 1, 0`;
      await h.exec({
        sqlite: `WITH RECURSIVE i(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM i WHERE n < ${rows})
          INSERT INTO requests (seq, at, method, path, route, status, ms, replayed) SELECT ${values} FROM i`,
        pg: `INSERT INTO requests (seq, at, method, path, route, status, ms, replayed) SELECT ${values} FROM generate_series(1, ${rows}) AS n`,
      });
      const release = await h.lockTable('requests');
      // Many more whole-log reads than the store has connections (PostgreSQL: store.poolSize 10).
      let readsDone = 0;
      const reads = Array.from({ length: 40 }, () => store.listRequests({ limit: Number.POSITIVE_INFINITY }).then((page) => (readsDone++, page)));
      try {
        await new Promise(setImmediate);
        expect(readsDone, 'the event loop turned while the reads went on').to.equal(0);
        await store.accept([ev('new')], []);
        expect((await store.findKeys(['no-such-key']))[0]).to.equal(undefined);
        expect(readsDone, 'an accept committed while the reads went on').to.equal(0);
      } finally {
        await release();
      }
      for (const page of await Promise.all(reads)) expect(page).to.have.length(rows);
    });
  });
}
