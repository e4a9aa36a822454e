import { answer, JSON_HEADERS } from '../http/answer.js';
import type { Exchange } from '../http/exchange.js';
import { fixtureOfRequest, fixtureText } from '../fixtures/from-request.js';
import { FixtureProblem } from '../fixtures/run-fixture.js';
import { whyNotReplay, type Replayed } from '../http/replay.js';
import { mappingLabel } from '../http/routes-table.js';
import type { RequestRecord } from '../store/records.js';
import { answerPage, notFoundPage, redirect } from './pages.js';
import { requestPage, requestsPage, type RequestsFilter } from './requests-pages.js';
import type { PageDeps } from './routes.js';

const REQUESTS_PAGE = 50;

/** `/console/requests`: the request log, newest first, filtered by status class and route label. */
export async function requests(deps: PageDeps, ex: Exchange): Promise<void> {
  const params = new URLSearchParams(ex.route!.query);
  const filter: RequestsFilter = {};
  const status = /^([2-5])xx$/.exec(params.get('status') ?? '');
  if (status) filter.statusClass = Number(status[1]);
  const label = params.get('route');
  if (label) filter.route = label;
  const before = Number(params.get('before'));
  if (params.get('before') && Number.isSafeInteger(before)) filter.before = before;
  const list = await deps.store.listRequests({ limit: REQUESTS_PAGE, ...filter });
  // The route labels a request can have.
  const routes = ['wake', 'agent', ...deps.mappings.map((m) => mappingLabel(m.id)), 'events', 'runs', 'unmatched'];
  answerPage(ex, 200, requestsPage(list, filter, routes, REQUESTS_PAGE));
}

/** `/console/requests/SEQ`: one logged request, its replays, and whether it can be replayed. */
export async function request(deps: PageDeps, ex: Exchange): Promise<void> {
  const found = await loggedRequest(deps, ex, 'requests/');
  if (found) answerPage(ex, 200, requestPage(found, await deps.store.listRequests({ limit: 20, replayOf: found.seq }), whyNotReplay(found, { path: deps.hooksPath, mappings: deps.mappings })));
}

/** POST `/console/replay/SEQ`: the kept request again, to the route it reached, through the current mappings; then the new request's page. */
export async function replay(deps: PageDeps, ex: Exchange): Promise<void> {
  const found = await loggedRequest(deps, ex, 'replay/');
  if (!found) return;
  const seq = found.seq;
  const refused = whyNotReplay(found, { path: deps.hooksPath, mappings: deps.mappings });
  if (refused !== undefined) {
    answerPage(ex, 409, notFoundPage(`This request cannot be replayed: ${refused}.`, 'Cannot replay'));
    return;
  }
  let done: Replayed;
  try {
    done = await deps.replay(found);
  } catch (err) {
    deps.log.warn({ err, seq }, 'console replay failed');
    answerPage(ex, 502, notFoundPage(`The replay could not be sent: ${(err as Error).message}.`, 'Replay failed'));
    return;
  }
  const mine = (await deps.store.listRequests({ limit: 20, replayOf: seq })).find((r) => r.requestId === done.requestId);
  redirect(ex, `/console/requests/${mine ? mine.seq : seq}`);
}

/** GET `/console/fixture/SEQ`: the request as the fixture `hookrelay fixture SEQ` writes, as a download. */
export async function fixture(deps: PageDeps, ex: Exchange): Promise<void> {
  const found = await loggedRequest(deps, ex, 'fixture/');
  if (!found) return;
  let text: string;
  try {
    text = fixtureText(await fixtureOfRequest(deps.fixtures, found));
  } catch (err) {
    if (!(err instanceof FixtureProblem)) throw err;
    answerPage(ex, 409, notFoundPage(`${err.message}.`, 'No fixture'));
    return;
  }
  answer(ex, 200, { ...JSON_HEADERS, 'content-disposition': `attachment; filename="fixture-${found.seq}.json"` }, text);
}

/** The request-log row that `requests/SEQ` or `replay/SEQ` names; undefined once it has answered 404 for a missing one. */
async function loggedRequest(deps: PageDeps, ex: Exchange, prefix: string): Promise<RequestRecord | undefined> {
  const seq = Number(ex.route!.name.slice(prefix.length));
  const found = Number.isSafeInteger(seq) ? await deps.store.getRequest(seq) : undefined;
  if (!found) answerPage(ex, 404, notFoundPage('No request with that number (it may have been purged after store.retainDays).'));
  return found;
}
