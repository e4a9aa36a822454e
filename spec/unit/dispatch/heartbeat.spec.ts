import { mock } from 'node:test';
import { expect } from 'chai';
import { silentLogger } from '../../support/silent-logger.js';
import { createHeartbeat } from '../../../src/dispatch/heartbeat.js';
import { isHeartbeatOk } from '../../../src/dispatch/main-session.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Moves the fake clock (https://nodejs.org/api/test.html#class-mocktimers) on by `ms`, one
 * millisecond at a time, letting the promises each timer settles run before the next, as a real
 * event loop would (setImmediate is not faked).
 */
async function advance(ms: number): Promise<void> {
  for (let i = 0; i < ms; i++) {
    mock.timers.tick(1);
    await new Promise((r) => setImmediate(r));
  }
}

describe('dispatch/heartbeat scheduler', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'setInterval', 'Date'] }));
  afterEach(() => mock.timers.reset());

  it('coalesces triggers while pending into one turn, within the debounce window', async () => {
    const starts: number[] = [];
    const hb = createHeartbeat({ everyMs: 0, log: silentLogger, turn: async () => { starts.push(Date.now()); return { more: false }; } });
    hb.start();
    const t0 = Date.now();
    for (let i = 0; i < 20; i++) hb.trigger();
    await advance(400);
    expect(starts).to.have.length(1);
    expect(starts[0]! - t0, 'the 200 ms debounce').to.equal(200);
    await hb.stop();
  });

  it('triggers during a running turn lead to exactly one more turn after it', async () => {
    let turns = 0;
    const hb = createHeartbeat({ everyMs: 0, debounceMs: 10, log: silentLogger, turn: async () => { turns++; await sleep(100); return { more: false }; } });
    hb.start();
    hb.trigger();
    await advance(40); // running now
    hb.trigger();
    hb.trigger();
    await advance(400);
    expect(turns).to.equal(2);
    await hb.stop();
  });

  it('runs again at once when a turn reports more backlog, and triggers periodically', async () => {
    let turns = 0;
    const hb = createHeartbeat({ everyMs: 150, debounceMs: 10, log: silentLogger, turn: async () => ({ more: ++turns === 1 }) });
    hb.start();
    await advance(260); // periodic at 150 → turn 1 (more) → turn 2
    expect(turns).to.equal(2);
    await advance(150);
    expect(turns).to.equal(3);
    await hb.stop();
  });

  it('stop() aborts the model signal at once and resolves when the turn has ended', async () => {
    let seen: AbortSignal | undefined;
    let ended = false;
    const hb = createHeartbeat({
      everyMs: 0, debounceMs: 1, log: silentLogger,
      turn: (s) => { seen = s; return new Promise((r) => { s.addEventListener('abort', () => setTimeout(() => { ended = true; r({ more: false }); }, 50)); }); },
    });
    hb.start();
    hb.trigger();
    await advance(30);
    const stopping = hb.stop();
    expect(seen!.aborted).to.equal(true);
    expect(ended).to.equal(false);
    await advance(50);
    await stopping;
    expect(ended).to.equal(true);
    hb.trigger(); // no effect once stopped
  });

  it('recognises the acknowledgment alone, with light decoration, and nothing else', () => {
    for (const ok of ['HEARTBEAT_OK', ' HEARTBEAT_OK\n', '**HEARTBEAT_OK**', 'HEARTBEAT_OK.', '`HEARTBEAT_OK`']) expect(isHeartbeatOk(ok), ok).to.equal(true);
    for (const no of ['HEARTBEAT_OK but also this', 'heartbeat_ok', 'Done. HEARTBEAT_OK', '']) expect(isHeartbeatOk(no), no).to.equal(false);
  });
});
