import { expect } from 'chai';
import { createRouter, literal, routesOnParsedPath } from '../../../src/http/router.js';
import { ADMIN_TOKEN, startInProcess, TOKEN } from '../../support/in-process.js';

/** The least of a Koa context that @koa/router reads, with the gate's parsed path on the record. */
function fakeContext(parsedPath: string, rawPath: string, method = 'GET') {
  return { method, path: rawPath, host: 'localhost', request: {}, exchange: { route: { path: parsedPath } } };
}

describe('http router: @koa/router on the gate\'s parsed path', () => {
  it('routes on the record\'s path, never on Koa\'s raw ctx.path', async () => {
    const router = createRouter();
    const hits: string[] = [];
    router.get('/hooks/events', () => {
      hits.push('events');
    });
    const routes = routesOnParsedPath(router);
    let passed = 0;
    const next = async () => {
      passed++;
    };
    await routes(fakeContext('/hooks/events', '/x/../%68ooks//events') as never, next);
    await routes(fakeContext('/other', '/hooks/events') as never, next);
    expect(hits).to.deep.equal(['events']);
    expect(passed).to.equal(1);
  });

  it('matches as the gate does: case-sensitive, no optional trailing slash, HEAD with GET', async () => {
    const router = createRouter();
    let hits = 0;
    router.get('/hooks/events', () => {
      hits++;
    });
    const routes = routesOnParsedPath(router);
    const next = async () => {};
    for (const [path, method] of [['/Hooks/events', 'GET'], ['/hooks/events/', 'GET'], ['/hooks/events', 'POST']]) {
      await routes(fakeContext(path!, path!, method) as never, next);
    }
    expect(hits).to.equal(0);
    await routes(fakeContext('/hooks/events', '/hooks/events', 'HEAD') as never, next);
    expect(hits).to.equal(1);
  });

  it('reads hooks.path as a literal, whatever path-to-regexp syntax it holds', () => {
    const router = createRouter();
    const base = literal('/h:o(o)k*s+{x}!?');
    router.get(`${base}/runs/:id`, () => {});
    expect(router.match('/h:o(o)k*s+{x}!?/runs/r-1', 'GET').route).to.equal(true);
    expect(router.match('/hxo(o)k*s+{x}!?/runs/r-1', 'GET').route).to.equal(false);
    expect(router.match('/h:o(o)k*s+{x}!?/runs/r-1/more', 'GET').route).to.equal(false);
  });

  it('serves the admin reads under a hooks.path with router syntax in it, behind the admin token', async function () {
    this.timeout(20_000);
    const gw = await startInProcess({ hooks: { path: '/h:o(o)k*s' } });
    try {
      const events = await fetch(`${gw.hooks}/events`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect(events.status).to.equal(200);
      expect(await events.json()).to.deep.equal({ ok: true, events: [] });
      // Another spelling of the same path is the same route, and still needs the admin token.
      const spelled = `${gw.base}/x/../h%3Ao(o)k*s//runs`;
      expect((await fetch(spelled, { headers: { authorization: `Bearer ${TOKEN}` } })).status).to.equal(401);
      expect((await fetch(spelled, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status).to.equal(200);
    } finally {
      await gw.stop();
    }
  });
});
