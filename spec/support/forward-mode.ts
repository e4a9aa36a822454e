import { expect } from 'chai';
import type { FakeModel } from './fake-model.js';
import type { FakeUpstream, UpstreamCall } from './fake-upstream.js';
import { ADMIN_TOKEN, call, until } from './gateway.js';
import { startInProcess, storeRows, type InProcess } from './in-process.js';

/** The forward-mode specs' gateway: the real app in-process, forwarding to `upstream`. */
export async function startForward(upstream: FakeUpstream, model: FakeModel, extra: Record<string, any> = {}): Promise<InProcess> {
  return startInProcess({
    agent: { baseUrl: model.baseUrl, model: 'm' },
    runtime: { kind: 'forward', forward: { url: upstream.url, token: upstream.token, timeoutSeconds: 5 } },
    delivery: { maxAttempts: 3, maxDelaySeconds: 1 },
    ...extra,
  });
}

export async function waitRunOf(app: InProcess, runId: string, ok: (run: any) => boolean): Promise<any> {
  let run: any;
  return until(() => `run ${runId}: ${JSON.stringify(run)}`, async () => {
    run = (await call(`${app.hooks}/runs/${runId}`, { token: ADMIN_TOKEN })).data.run;
    return ok(run) ? run : undefined;
  }, 15_000, 30);
}
export const ended = (run: any) => run.status !== 'queued' && run.status !== 'running';
/** Forward rows commit with their accept, and only a pending one is sent again. */
export const forwardRowsOf = (app: InProcess) => storeRows<{ status: string }>(app, "SELECT status FROM outbox WHERE kind = 'forward'");

export function expectForwardHeaders(upstream: FakeUpstream, c: UpstreamCall, key: string) {
  expect(c.method).to.equal('POST');
  expect(c.headers.authorization).to.equal(`Bearer ${upstream.token}`);
  expect(c.headers['x-openclaw-idempotency-key']).to.equal(key);
  expect(c.headers['content-type']).to.match(/^application\/json/);
}
