import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/chromium.js';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../support/in-process.js';
import { startFakeModel, type FakeModel } from '../support/fake-model.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-providers.js';
import { until } from '../support/gateway.js';

/**
 * The console in headless Chromium (support/chromium.ts: the npm package's, or HOOKRELAY_CHROMIUM).
 * One browser for the file, one page reused. With SCREENSHOT=FILE, the runs page is saved there
 * at 1280×800 (how docs/console.png is made).
 */
/** Payload text that would run if it ever became markup or a URL. */
const XSS = '<script>window.__pwned = "script"</script><img src=x onerror="window.__pwned = \'img\'"><a href="javascript:window.__pwned=1">javascript:alert(1)</a>';

describe('console in headless Chromium', function () {
  this.timeout(60_000);
  let browser: Browser;
  let page: Page;
  let gw: InProcess;
  let model: FakeModel;
  let telegram: FakeProvider;
  /** Dialogs, page errors and console messages of type error (a CSP violation is one). */
  const sideEffects: string[] = [];

  before(async () => {
    model = await startFakeModel([{ match: 'acme/web', status: 400, error: { message: 'model not found' } }, { reply: `Reply with ${XSS}` }]);
    telegram = await startFakeProvider('telegram');
    gw = await startInProcess({
      agent: { baseUrl: model.baseUrl },
      providers: { telegram: telegram.config },
      hooks: {
        keepBodies: 1,
        mappings: [
          { id: 'github-push', match: { path: 'github' }, action: 'agent', name: 'GitHub push', messageTemplate: 'Push to {{repository}} by {{pusher}}', sessionKey: 'hook:github:{{repository}}' },
          { id: 'alerts', match: { path: 'alerts' }, action: 'wake', engine: 'jsonata', textTemplate: '"Alert: " & title' },
        ],
      },
    });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on('dialog', (d) => {
      sideEffects.push(`dialog: ${d.message()}`);
      void d.dismiss();
    });
    page.on('pageerror', (e) => sideEffects.push(`pageerror: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') sideEffects.push(`console: ${m.text()}`);
    });
  });
  after(async () => {
    await browser?.close();
    await gw?.stop();
    await model?.close();
    await telegram?.close();
  });

  const hook = (name: string, body: unknown) =>
    fetch(`${gw.hooks}/${name}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

  async function expectNothingRan() {
    expect(await page.evaluate(() => (window as any).__pwned)).to.equal(undefined);
    expect(sideEffects).to.deep.equal([]);
  }

  it('refuses a wrong token on the sign-in page, then signs in with the right one', async () => {
    await page.goto(`${gw.base}/console/`);
    expect(new URL(page.url()).pathname).to.equal('/console/login');
    await page.fill('#token', 'wrong-token');
    await page.click('button[type=submit]');
    await page.waitForSelector('.problem');
    expect(await page.textContent('.problem')).to.include('not the admin token');
    // The refusal's 401 is the only thing the browser complained about.
    expect(sideEffects).to.deep.equal(['console: Failed to load resource: the server responded with a status of 401 (Unauthorized)']);
    sideEffects.length = 0;
    await page.fill('#token', ADMIN_TOKEN);
    await page.click('button[type=submit]');
    await page.waitForSelector('h1:has-text("Runs")');
    expect(new URL(page.url()).pathname).to.equal('/console/');
    const cookies = await page.context().cookies();
    expect(cookies).to.have.length(1);
    expect(cookies[0]).to.include({ name: 'hookrelay_console', httpOnly: true, sameSite: 'Strict', path: '/console/' });
  });

  it('shows an event POSTed to /hooks/wake live on the events page, as text', async () => {
    await page.goto(`${gw.base}/console/events`);
    await page.waitForSelector('#live[data-state="open"]');
    const res = await hook('wake', { text: `Deploy finished ${XSS}`, mode: 'next-heartbeat' });
    expect(res.status).to.equal(200);
    const row = page.locator('#events tbody tr').first();
    await row.locator('.text').getByText('Deploy finished', { exact: false }).waitFor({ timeout: 5_000 });
    expect(await row.locator('.text').textContent()).to.equal(`Deploy finished ${XSS}`);
    expect(await page.locator('#events img, #events script, #events a[href^="javascript"]').count()).to.equal(0);
    await expectNothingRan();
  });

  it('opens an agent run and shows its reply and delivery attempts', async () => {
    const res = await hook('agent', { message: `Summarise ${XSS}`, name: `Nightly <b>build</b>`, deliver: true, provider: 'telegram', to: telegram.to });
    const { runId } = await res.json();
    await telegram.waitForMessages(1, 10_000);
    // The delivery settles after the provider answered: wait for the run to say so.
    await until('the run to say delivered', async () => {
      const run = await (await fetch(`${gw.hooks}/runs/${runId}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json();
      return run.run.delivery?.status === 'delivered';
    }, 10_000, 100);
    await page.goto(`${gw.base}/console/`);
    await page.click(`a[href="/console/runs/${runId}"]`);
    await page.waitForSelector('h2:has-text("Delivery")');
    expect(await page.textContent('h1')).to.include('Nightly <b>build</b>');
    expect(await page.locator('h1 b').count()).to.equal(0);
    expect(await page.locator('pre.text').first().textContent()).to.equal(`Summarise ${XSS}`);
    expect(await page.locator('pre.text').nth(1).textContent()).to.equal(`Reply with ${XSS}`);
    const delivery = page.locator('dl.delivery');
    expect(await delivery.locator('.badge').textContent()).to.equal('delivered');
    expect(await delivery.textContent()).to.include(`telegram:${telegram.to}`);
    expect(await delivery.locator('dt:has-text("Attempts") + dd').textContent()).to.equal('1');
    await expectNothingRan();
  });

  it('renders a payload in the playground through the mappings, shown as text', async () => {
    await page.goto(`${gw.base}/console/mappings`);
    expect(await page.locator('table.mappings tbody tr').count()).to.equal(2);
    await page.fill('#pg-name', 'github');
    await page.fill('#pg-payload', JSON.stringify({ repository: XSS, pusher: 'ana' }));
    await page.click('#playground button[type=submit]');
    await page.waitForSelector('#playground-output[data-state="ok"]');
    const out = JSON.parse((await page.textContent('#playground-output'))!);
    expect(out).to.include({ mapping: 'github-push', action: 'agent', name: 'GitHub push', message: `Push to ${XSS} by ana` });
    expect(out.sessionKey).to.equal(`hook:github:${XSS}`);
    expect(await page.locator('#playground-output *').count()).to.equal(0);
    // And a refusal: the mapping's own error, as `hookrelay test` says it.
    await page.fill('#pg-name', 'alerts');
    await page.fill('#pg-payload', '{"title": ');
    await page.click('#playground button[type=submit]');
    await page.waitForSelector('#playground-output[data-state="problem"]');
    expect(await page.textContent('#playground-output')).to.equal('invalid_json: the body is not valid JSON');
    await page.fill('#pg-payload', JSON.stringify({ title: XSS }));
    await page.click('#playground button[type=submit]');
    await page.waitForSelector('#playground-output[data-state="ok"]');
    expect(JSON.parse((await page.textContent('#playground-output'))!)).to.deep.equal({ mapping: 'alerts', status: 200, action: 'wake', text: `Alert: ${XSS}`, mode: 'now' });
    expect(await page.locator('body img').count()).to.equal(0);
    await expectNothingRan();
  });

  it('fits a phone: no page fits wider than the screen', async () => {
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 } });
    try {
      await phone.context().addCookies(await page.context().cookies());
      for (const p of ['/console/', '/console/requests', '/console/events', '/console/mappings']) {
        await phone.goto(`${gw.base}${p}`);
        const [scroll, client] = await phone.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
        expect(scroll, p).to.be.at.most(client);
      }
    } finally {
      await phone.close();
    }
  });

  it('shows the runs at 1280×800 (the README screenshot)', async () => {
    await hook('github', { repository: 'acme/api', pusher: 'ana' });
    await hook('github', { repository: 'acme/web', pusher: 'bo' });
    // Until both runs have ended (the model answers at once; the store commits right after).
    await until('both runs to end', async () => {
      const { runs } = await (await fetch(`${gw.hooks}/runs`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json();
      return runs.every((r: { status: string }) => r.status !== 'queued' && r.status !== 'running');
    }, 20_000, 100);
    await page.goto(`${gw.base}/console/`);
    await page.waitForSelector('table.runs');
    expect(await page.locator('table.runs tbody tr').count()).to.equal(3);
    expect(await page.locator('table.runs tbody tr').first().locator('.badge').textContent()).to.equal('failed');
    const [scroll, client] = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
    expect(scroll).to.be.at.most(client);
    if (process.env.SCREENSHOT) await page.screenshot({ path: process.env.SCREENSHOT });
    await expectNothingRan();
  });

  it('lists a request POSTed by the spec on the requests page, shows its kept body as text, and replays it as a new request with its own run', async () => {
    const res = await hook('github', { repository: XSS, pusher: 'cy' });
    expect(res.status).to.equal(202);
    const { runId } = await res.json();
    const refused = await fetch(`${gw.hooks}/github`, { method: 'POST', body: '{}' });
    expect(refused.status).to.equal(401);
    await page.goto(`${gw.base}/console/requests`);
    await page.waitForSelector('#requests');
    // The 401 is buffered (a fraction of a second): reload until it is there.
    await until('the 401 at the top of the requests page', async () => {
      if ((await page.locator('#requests tbody tr').first().locator('.badge').textContent()) === '401') return true;
      await page.reload();
      return false;
    }, 10_000, 100);
    const [top, accepted] = [page.locator('#requests tbody tr').nth(0), page.locator('#requests tbody tr').nth(1)];
    expect(await top.locator('.badge').textContent()).to.equal('401');
    expect(await top.textContent()).to.include('unauthorized');
    expect(await accepted.locator('.badge').textContent()).to.equal('202');
    expect(await accepted.textContent()).to.include('POST mapping:github-push');
    expect(await accepted.locator(`a[href="/console/runs/${runId}"]`).count()).to.equal(1);
    // The filter: 4xx only.
    await page.selectOption('#status', '4xx');
    await page.waitForURL(/status=4xx/);
    expect(await page.locator('#requests tbody .badge').allTextContents()).to.deep.equal(['401']);

    await page.goto(`${gw.base}/console/requests`);
    await accepted.locator('td a').first().click();
    await page.waitForSelector('#body');
    const original = new URL(page.url()).pathname;
    expect(await page.locator('#body').textContent()).to.equal(JSON.stringify({ repository: XSS, pusher: 'cy' }));
    expect(await page.locator('#body *').count()).to.equal(0);

    await page.click('form.replay button');
    await page.waitForURL((u) => u.pathname !== original && u.pathname.startsWith('/console/requests/'));
    const marker = page.locator('.marker-replay').first();
    expect(await marker.getAttribute('href')).to.equal(original);
    expect(await page.locator('dl#request .badge').first().textContent()).to.equal('202');
    const runLink = page.locator('dl#request a.action');
    const newRun = (await runLink.getAttribute('href'))!.slice('/console/runs/'.length);
    expect(newRun).to.not.equal(runId);
    // The new run is a real one, of the current mapping.
    await runLink.click();
    await page.waitForSelector('h2:has-text("Message")');
    expect(await page.locator('pre.text').first().textContent()).to.equal(`Push to ${XSS} by cy`);
    // And the original lists its replay.
    await page.goto(`${gw.base}${original}`);
    expect(await page.locator('ul.replays li').count()).to.equal(1);
    await expectNothingRan();
  });

  it('replays only from the console: a POST without the session is 401, one from elsewhere is refused (CSRF), and neither replays', async () => {
    await page.goto(`${gw.base}/console/requests`);
    const href = (await page.locator('#requests tbody tr td a').first().getAttribute('href'))!;
    const seq = href.split('/').pop();
    const count = async () => (await (await fetch(`${gw.base}/console/requests`, { headers: { cookie } })).text()).match(/<tr>/g)?.length;
    const cookie = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    const before = await count();
    const noSession = await fetch(`${gw.base}/console/replay/${seq}`, { method: 'POST', redirect: 'manual', headers: { origin: gw.base } });
    expect(noSession.status).to.equal(401);
    const foreign = await fetch(`${gw.base}/console/replay/${seq}`, { method: 'POST', redirect: 'manual', headers: { cookie, origin: 'http://evil.example' } });
    expect(foreign.status).to.equal(403);
    expect((await foreign.json()).error.code).to.equal('cross_origin');
    const bare = await fetch(`${gw.base}/console/replay/${seq}`, { method: 'POST', redirect: 'manual', headers: { cookie } });
    expect(bare.status).to.equal(403);
    await new Promise((r) => setTimeout(r, 400));
    expect(await count()).to.equal(before);
  });

  it('logout ends the session: the event stream closes and the pages send you to sign in', async () => {
    await page.goto(`${gw.base}/console/events`);
    await page.waitForSelector('#live[data-state="open"]');
    const cookie = (await page.context().cookies())[0]!;
    await page.click('.logout button');
    await page.waitForSelector('#token');
    expect(await page.context().cookies()).to.deep.equal([]);
    // The old cookie, kept by someone, opens nothing any more.
    const res = await fetch(`${gw.base}/console/events/stream`, { headers: { cookie: `${cookie.name}=${cookie.value}` } });
    expect(res.status).to.equal(401);
    await page.goto(`${gw.base}/console/mappings`);
    expect(new URL(page.url()).pathname).to.equal('/console/login');
    await expectNothingRan();
  });
});
