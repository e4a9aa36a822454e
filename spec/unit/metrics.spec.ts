import { expect } from 'chai';
import { createMetrics, DURATION_BUCKETS } from '../../src/metrics.js';

const NO_RUNS = async () => ({ queued: 0, running: 0, succeeded: 0, failed: 0, timed_out: 0 });

/** `name{labels} value` lines of one metric name, as written. */
function lines(text: string, name: string): string[] {
  return text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
}

describe('metrics: the request log\'s drop counter', () => {
  it('counts request-log rows dropped by the buffer (store/request-log.ts), from 0', async () => {
    const m = createMetrics(NO_RUNS);
    expect(lines(await m.render(), 'hookrelay_request_log_dropped_total')).to.deep.equal(['hookrelay_request_log_dropped_total 0']);
    m.requestLogDropped(3);
    m.requestLogDropped(1);
    expect(lines(await m.render(), 'hookrelay_request_log_dropped_total')).to.deep.equal(['hookrelay_request_log_dropped_total 4']);
  });
});

describe('metrics: the log output\'s drop counter', () => {
  it('reads the lines the log output dropped (log.ts) at each scrape, 0 without a source', async () => {
    expect(lines(await createMetrics(NO_RUNS).render(), 'hookrelay_log_dropped_total')).to.deep.equal(['hookrelay_log_dropped_total 0']);
    let dropped = 0;
    const m = createMetrics(NO_RUNS, () => dropped);
    dropped = 17;
    expect(lines(await m.render(), 'hookrelay_log_dropped_total')).to.deep.equal(['hookrelay_log_dropped_total 17']);
  });
});

describe('metrics: the request figures', () => {
  it('a duration on a bucket bound counts in that bucket (le is ≤), one past the last only in +Inf; sum and count exact', async () => {
    const m = createMetrics(NO_RUNS);
    m.request('wake', 200, DURATION_BUCKETS[0]!);
    m.request('wake', 200, 0.003);
    m.request('wake', 200, 11);
    const text = await m.render();
    const buckets = lines(text, 'hookrelay_request_duration_seconds_bucket');
    expect(buckets[0]).to.equal('hookrelay_request_duration_seconds_bucket{le="0.0001",route="wake"} 1');
    expect(buckets).to.include('hookrelay_request_duration_seconds_bucket{le="0.0025",route="wake"} 1');
    expect(buckets).to.include('hookrelay_request_duration_seconds_bucket{le="0.005",route="wake"} 2');
    expect(buckets).to.include('hookrelay_request_duration_seconds_bucket{le="10",route="wake"} 2');
    expect(buckets.at(-1)).to.equal('hookrelay_request_duration_seconds_bucket{le="+Inf",route="wake"} 3');
    expect(lines(text, 'hookrelay_request_duration_seconds_count')).to.deep.equal(['hookrelay_request_duration_seconds_count{route="wake"} 3']);
    const [sum] = lines(text, 'hookrelay_request_duration_seconds_sum');
    expect(Number(sum!.split(' ')[1])).to.be.closeTo(11.0031, 1e-9);
  });

  it('counts per route and status; a scrape reports totals and does not reset them', async () => {
    const m = createMetrics(NO_RUNS);
    for (let i = 0; i < 3; i++) m.request('mapping:gh', 202, 0.001);
    m.request('mapping:gh', 400, 0.001);
    m.request('unmatched', 401, 0.0001);
    await m.render();
    m.request('mapping:gh', 202, 0.001);
    expect(lines(await m.render(), 'hookrelay_requests_total')).to.deep.equal([
      'hookrelay_requests_total{route="mapping:gh",status="202"} 4',
      'hookrelay_requests_total{route="mapping:gh",status="400"} 1',
      'hookrelay_requests_total{route="unmatched",status="401"} 1',
    ]);
  });

  it('two gateways in one process keep their own registries', async () => {
    const a = createMetrics(NO_RUNS);
    const b = createMetrics(async () => ({ queued: 2, running: 0, succeeded: 0, failed: 0, timed_out: 0 }));
    a.heartbeat();
    expect(lines(await a.render(), 'hookrelay_heartbeats_total')).to.deep.equal(['hookrelay_heartbeats_total 1']);
    expect(lines(await b.render(), 'hookrelay_heartbeats_total')).to.deep.equal(['hookrelay_heartbeats_total 0']);
    expect(lines(await b.render(), 'hookrelay_runs')).to.include('hookrelay_runs{status="queued"} 2');
  });
});
