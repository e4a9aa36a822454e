import { expect } from 'chai';
import { storesFor, type Harness } from './harness.js';
import type { Sql } from '../../../../src/store/dialect.js';
import type { ListRequestsOptions } from '../../../../src/store/records.js';
import * as sql from '../../../../src/store/sql/index.js';

const MAX = Number.MAX_SAFE_INTEGER;

const requests = (opts: Omit<ListRequestsOptions, 'limit'>): [Sql, unknown[]] => {
  const { text, values } = sql.requests.listRequests({ limit: 50, ...opts });
  return [text, [...values, 50]];
};

/** Each filter or lookup the reads offer (GET {path}/runs|events, the console, the CLI, /metrics), as the store writes it. */
const READS: [name: string, statement: [Sql, unknown[]]][] = [
  ['runs by status', [sql.runs.listRunsWithStatus, [MAX, 50, 'succeeded']]],
  ['runs by status, paged on', [sql.runs.listRunsWithStatus, [1000, 50, 'failed']]],
  ['runs, paged on', [sql.runs.listRuns, [1000, 50]]],
  ['one run', [sql.runs.getRun, ['r1']]],
  ['a run\'s place (before=)', [sql.runs.runSeq, ['r1']]],
  ['events after a seq', [sql.events.listEvents, [10, 100]]],
  ['the request log by route', requests({ route: 'wake' })],
  ['the request log by status class', requests({ statusClass: 4 })],
  ['the request log by route and status class', requests({ route: 'mapping:github', statusClass: 2 })],
  ['the request log by route, paged on', requests({ route: 'wake', before: 1000 })],
  ['the request log by status class, paged on', requests({ statusClass: 5, before: 1000 })],
  ['the request log, paged on', requests({ before: 1000 })],
  ['the request log\'s 2xx by route', requests({ route: 'agent', statusClass: 2 })],
  ['the replays of a request', requests({ replayOf: 7 })],
  ['one logged request', [sql.requests.getRequest, [7]]],
  ['an idempotency key', [sql.idempotency.findKey, ['k', '2025-01-01T00:00:00.000Z']]],
];

/** query plans: every read is served by an index, not a scan or a sort of a table that grows */
export function plansContract(h: Harness): void {
  describe('query plans', function () {
    this.timeout(30000);
    const open = storesFor(h);
    beforeEach(async () => {
      await open(); // migrated
    });

    for (const [name, [statement, params]] of READS) {
      it(`${name}: searched through an index, nothing read whole or sorted`, async () => {
        const plan = await h.plan(statement, params);
        expect(plan.scanned, plan.text).to.deep.equal([]);
        expect(plan.sorted, plan.text).to.equal(false);
        expect(plan.searched, plan.text).to.not.be.empty;
      });
    }

    it('runs by status take the status index, and the request log each filter\'s own', async () => {
      const searched = async ([s, p]: [Sql, unknown[]]) => (await h.plan(s, p)).searched;
      expect(await searched([sql.runs.listRunsWithStatus, [MAX, 50, 'succeeded']])).to.include('runs_status');
      expect(await searched(requests({ route: 'wake' }))).to.include('requests_route');
      expect(await searched(requests({ statusClass: 4 }))).to.include('requests_class');
      expect(await searched(requests({ route: 'wake', statusClass: 4 }))).to.include('requests_route_class');
      // The rows kept with an event or run (sql/requests.ts), through their own indexes.
      // PostgreSQL costs runs' two request-log indexes alike on this harness's empty runs table: either is its own.
      const runsOwn = (i: string[]) => i.includes('runs_req') || i.includes('runs_req_route');
      expect(await searched(requests({ before: 1000 }))).to.include('events_req').and.to.satisfy(runsOwn);
      expect(await searched(requests({ route: 'wake' }))).to.include.members(['events_req_route', 'runs_req_route']);
      expect(await searched([sql.requests.getRequest, [7]])).to.include('events_req').and.to.satisfy(runsOwn);
      // Its last turns by index; only those (at most the limit) are put back in order.
      expect(await searched([sql.history.readHistory, ['hook:x', 20]])).to.include('history_session');
    });
  });
}
