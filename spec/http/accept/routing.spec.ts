import net from 'node:net';
import { expect } from 'chai';
import { call } from '../../support/gateway.js';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';
import { parseAnswer, rawRequest } from '../../support/raw-http.js';

/**
 * One parse decides (CONTRACT.md §5, STYLE.md #13): every spelling of a path under the hooks
 * path — case, absolute form, dot segments, double slashes, percent-escapes, backslashes, a
 * fragment — is decided on as the one path it names, so none reaches a route without the
 * token; and with the token, each reaches the route its normalised path names. Raw sockets,
 * because HTTP clients clean such request lines up before sending them.
 */
describe('http: one routing decision for every spelling of a path', () => {
  let gw: InProcess;
  let port: number;
  const body = '{"text":"sneaked in","mode":"next-heartbeat","message":"sneaked in"}';
  const post = (target: string, headers = '') =>
    rawRequest(port, `POST ${target} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}${headers}`, body);
  const get = (target: string, headers = '') => rawRequest(port, `GET ${target} HTTP/1.1\r\nHost: x${headers}`);
  const withToken = `\r\nAuthorization: Bearer ${TOKEN}`;

  before(async () => {
    gw = await startInProcess({
      hooks: {
        mappings: [
          { id: 'nested', match: { path: 'a/b' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'nested {{path}}' },
          { id: 'spaced', match: { path: 'my hook' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'spaced {{path}}' },
        ],
      },
    });
    port = Number(new URL(gw.base).port);
  });
  after(async () => { await gw.stop(); });
  // A right token clears the address's failures of its kind: without this the 21st 401 would be a 429.
  afterEach(async () => {
    await events();
    expect((await call(`${gw.hooks}/no-such-hook`, { token: TOKEN, json: {} })).status).to.equal(404);
  });

  async function events() {
    const r = await call(`${gw.hooks}/events?limit=1000`, { token: ADMIN_TOKEN });
    expect(r.status).to.equal(200);
    return r.data.events as { text: string }[];
  }

  const underHooks = [
    // absolute form (curl --request-target)
    'http://x/hooks/wake', 'HTTP://X/hooks/agent', 'https://x:1/hooks/wake', 'http://x/hooks/wake?a=1',
    // dot segments
    '/x/../hooks/wake', '/hooks/./wake', '/hooks/x/../wake', '/./hooks/wake', '/hooks/wake/.', '/hooks/a/../../hooks/wake',
    // empty segments and trailing slashes
    '//hooks/wake', '/hooks//wake', '///hooks///agent', '/hooks/wake/', '/hooks/wake//',
    // percent-escapes, also of the base path and of a slash
    '/hooks/%77ake', '/%68ooks/wake', '/%68%6F%6F%6B%73/agent', '/hooks%2Fwake', '/hooks/%2e%2e/hooks/wake', '/hooks/a%2Fb',
    // backslashes, a fragment, a query spelling of the token that is empty
    '/hooks\\wake', '/hooks/wake#frag', '/hooks/wake?token=', '/hooks/my%20hook',
  ];
  for (const target of underHooks) {
    it(`401 without the token: POST ${target}`, async () => {
      const r = await post(target);
      expect(r.status, r.body).to.equal(401);
      expect(JSON.parse(r.body).error.code).to.equal('unauthorized');
    });
  }

  for (const target of ['/hooks/events', 'http://x/hooks/events', '/hooks//events', '/hooks/%65vents', '/x/../hooks/runs/abc', 'http://x/hooks/runs/abc', '/hooks/runs', '/hooks//runs/', '/hooks/%72uns', 'http://x/hooks/runs?status=failed']) {
    it(`401 without the token: GET ${target}`, async () => {
      const r = await get(target);
      expect(r.status, r.body).to.equal(401);
    });
  }

  for (const target of ['/hooks/%zz', '/hooks/%00wake', '/hooks/wake%0d%0aX-Injected:%201', '*']) {
    it(`a target that cannot be parsed asks for the token first, then is 400 invalid_path: ${JSON.stringify(target)}`, async () => {
      expect((await post(target)).status).to.equal(401);
      const r = await post(target, withToken);
      expect(r.status, r.body).to.equal(400);
      expect(JSON.parse(r.body).error.code).to.equal('invalid_path');
    });
  }

  for (const target of ['x/hooks/wake', '\\hooks\\wake', '/hooks/wake\tx']) {
    it(`a target Node's parser refuses never reaches a route: ${JSON.stringify(target)}`, async () => {
      for (const headers of ['', withToken]) expect((await post(target, headers)).status).to.equal(400);
    });
  }

  for (const [method, target] of [['POST', '/HOOKS/wake'], ['POST', '/Hooks/agent'], ['GET', '/HOOKS/events'], ['GET', '/HOOKS/runs/abc'], ['GET', '/HOOKS/runs'], ['POST', 'http://x/HOOKS/wake']] as const) {
    it(`the hooks path is case-sensitive: ${method} ${target} is 404 not_found, token or not`, async () => {
      for (const headers of ['', withToken]) {
        const r = method === 'POST' ? await post(target, headers) : await get(target, headers);
        expect(r.status, r.body).to.equal(404);
        expect(JSON.parse(r.body).error.code).to.equal('not_found');
      }
    });
  }

  it('accepted nothing from any of the requests without a token', async () => {
    expect((await events()).filter((e) => e.text === 'sneaked in')).to.deep.equal([]);
  });

  for (const [target, expected] of [
    ['/hooks//wake', 'sneaked in'], ['http://x/hooks/wake', 'sneaked in'], ['/hooks/%77ake', 'sneaked in'],
    ['/x/../hooks/wake/', 'sneaked in'], ['/hooks/a%2Fb', 'nested a/b'], ['/hooks/a//b/', 'nested a/b'],
    ['/hooks/my%20hook', 'spaced my hook'],
  ] as const) {
    it(`with the token, ${target} reaches the route its normalised path names`, async () => {
      const r = await post(target, withToken);
      expect(r.status, r.body).to.equal(200);
      const { eventId } = JSON.parse(r.body);
      const event = (await events()).find((e: any) => e.id === eventId);
      expect(event?.text).to.equal(expected);
    });
  }

  for (const [method, target, allow] of [['GET', '/hooks//wake', 'POST'], ['PUT', 'http://x/hooks/agent', 'POST'], ['POST', '/hooks/%65vents', 'GET, HEAD'], ['POST', '/hooks/runs/', 'GET, HEAD'], ['POST', '/hooks/runs/abc', 'GET, HEAD'], ['POST', '/healthz', 'GET, HEAD']] as const) {
    it(`405 with Allow: ${allow} to ${method} ${target}, decided on the normalised path before the token`, async () => {
      const r = await rawRequest(port, `${method} ${target} HTTP/1.1\r\nHost: x\r\nContent-Length: 0`);
      expect(r.status, r.body).to.equal(405);
      expect(r.headers.allow).to.equal(allow);
    });
  }

  it('/healthz in absolute form, and unknown paths outside the hooks are 404 not_found', async () => {
    expect((await get('http://x/healthz')).status).to.equal(200);
    const r = await get('/nowhere');
    expect(r.status).to.equal(404);
    expect(JSON.parse(r.body).error.code).to.equal('not_found');
  });

  describe('Expect: 100-continue', () => {
    it('a request refused by the gate never gets 100 Continue', async () => {
      for (const [target, headers, status] of [
        ['/hooks/wake', '', 401],
        ['/hooks/wake', `${withToken}\r\nContent-Length: 99999999`, 413],
        ['/HOOKS/wake', withToken, 404],
      ] as const) {
        const extra = headers.includes('Content-Length') ? headers : `${headers}\r\nContent-Length: ${body.length}`;
        const r = await rawRequest(port, `POST ${target} HTTP/1.1\r\nHost: x\r\nExpect: 100-continue${extra}`);
        expect(r.statusLines, target).to.deep.equal([r.statusLines[0]]);
        expect(r.status, r.body).to.equal(status);
      }
    });

    it('a refused request never told to continue is closed at once: its client sends no body to wait for', async () => {
      // A final answer instead of 100 tells the client not to send the body (RFC 9110 §10.1.1),
      // so the read-on after an early answer (CONTRACT.md §8, up to 5 s) has nothing to read.
      const closedAfter = await new Promise<number>((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1', () => {
          socket.write(`POST /hooks/wake HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: 99999999\r\n\r\n`);
        });
        let answeredAt = 0;
        let got = '';
        socket.setEncoding('latin1');
        socket.on('data', (d: string) => {
          got += d;
          if (!answeredAt && parseAnswer(got)) answeredAt = Date.now();
        });
        socket.on('error', reject);
        socket.on('close', () => (answeredAt ? resolve(Date.now() - answeredAt) : reject(new Error(`closed before an answer: ${got}`))));
      });
      expect(closedAfter).to.be.below(2_000);
    });

    it('a request the gate lets through gets 100 Continue, then its answer', async () => {
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1', () => {
          socket.write(`POST /hooks/wake HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nExpect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
        });
        let got = '';
        let sent = false;
        socket.setEncoding('latin1');
        socket.on('data', (d: string) => {
          got += d;
          if (!sent && got.includes('\r\n\r\n')) {
            sent = true; // the body goes only after the first answer, which must be the 100
            socket.write(body);
          }
          if (parseAnswer(got)) {
            socket.destroy();
            resolve(got);
          }
        });
        socket.on('error', reject);
      });
      expect(answer.startsWith('HTTP/1.1 100 Continue\r\n')).to.equal(true);
      expect(parseAnswer(answer)!.status).to.equal(200);
    });
  });

  describe('a refused request is answered and closed without reading its body', () => {
    /**
     * Announces a 1 GB body, streams it as fast as the server takes it, and counts what the
     * server took before it closed the connection. Before the fix a 401 went on reading to the
     * end (keep-alive), so this would stream the whole gigabyte.
     */
    async function bytesTakenBeforeClose(head: string): Promise<{ taken: number; status: number }> {
      return new Promise((resolve) => {
        const chunk = Buffer.alloc(64 * 1024, 'a');
        let taken = 0;
        let received = '';
        let finished = false;
        const socket = net.connect(port, '127.0.0.1');
        const done = () => {
          if (finished) return;
          finished = true;
          socket.destroy();
          resolve({ taken, status: parseAnswer(received)?.status ?? 0 });
        };
        socket.setEncoding('latin1');
        socket.on('data', (d: string) => { received += d; });
        socket.on('error', done);
        socket.on('close', done);
        socket.on('connect', () => {
          socket.write(`${head}\r\n\r\n`);
          const pump = () => {
            while (!finished && taken < 256 * 1024 * 1024) {
              taken += chunk.length;
              if (!socket.write(chunk)) {
                socket.once('drain', pump);
                return;
              }
            }
            done();
          };
          pump();
        });
      });
    }

    for (const [what, head, status] of [
      ['401, no token', 'POST /hooks/wake HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000', 401],
      ['413 on Content-Length', `POST /hooks/wake HTTP/1.1\r\nHost: x${withToken}\r\nContent-Length: 1000000000`, 413],
      ['413 on a chunked body past the limit', `POST /hooks/wake HTTP/1.1\r\nHost: x${withToken}\r\nTransfer-Encoding: chunked`, 413],
      ['404 for an unknown path', 'POST /nowhere HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000', 404],
    ] as const) {
      it(`${what}: answered, then closed after a few socket buffers of body`, async () => {
        // A chunked stream of 'a's is not valid chunk framing: announce one huge chunk first.
        const r = await bytesTakenBeforeClose(head.includes('chunked') ? `${head}\r\n\r\n40000000` : head);
        expect(r.status).to.equal(status);
        expect(r.taken, 'bytes the server took before closing').to.be.below(32 * 1024 * 1024);
      });
    }
  });
});
