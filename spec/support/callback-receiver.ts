import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { startFakeModel, type FakeModel } from './fake-model.js';
import { freePort, tmpDir } from './gateway.js';
import { closeServer } from './recorder.js';

/** One callback request as the receiver saw it. */
export interface CallbackHit {
  id: string;
  timestamp: string;
  /** The body parsed, when its signature verified (undefined: it did not). */
  payload?: Record<string, unknown>;
  verified: boolean;
  /** What the receiver answered. */
  status: number;
}

/**
 * A callback receiver as an integrator writes one: it verifies each request with the
 * `standardwebhooks` library (the reference implementation of the spec, not hookrelay's code)
 * before it acts, and answers what `answer` says (default 200). `acknowledged()`: the requests
 * it answered 2xx — what the sender may count as delivered.
 */
export interface CallbackReceiver {
  url: string;
  hits: CallbackHit[];
  answer: (hit: CallbackHit) => { status: number; headers?: Record<string, string> };
  acknowledged(): CallbackHit[];
  close(): Promise<void>;
}

export async function startCallbackReceiver(secret: string): Promise<CallbackReceiver> {
  const webhook = new Webhook(secret);
  const hits: CallbackHit[] = [];
  const receiver: CallbackReceiver = {
    url: '',
    hits,
    answer: () => ({ status: 200 }),
    acknowledged: () => hits.filter((h) => h.status >= 200 && h.status < 300),
    close: () => closeServer(server),
  };
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const headers = {
      'webhook-id': String(req.headers['webhook-id'] ?? ''),
      'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
      'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
    };
    const hit: CallbackHit = { id: headers['webhook-id'], timestamp: headers['webhook-timestamp'], verified: false, status: 0 };
    try {
      hit.payload = webhook.verify(body, headers) as Record<string, unknown>;
      hit.verified = true;
    } catch {
      hit.verified = false;
    }
    const a = hit.verified ? receiver.answer(hit) : { status: 401 };
    hit.status = a.status;
    hits.push(hit);
    res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers }).end('{}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callbacks?t=receiver-secret`;
  return receiver;
}

export const CALLBACK_TOKEN = 'callbacks-token-0123456789';

/**
 * The completion specs' per-test world: a fake model (a run with "fail me" fails with a 400), a
 * callback receiver that verifies with `secret`, and `config()`, a gateway config whose runs call back to it. Call it after the
 * describe's own afterEach, so that the gateway stops before these close.
 */
export function callbackWorld() {
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const world = {
    secret,
    model: undefined as unknown as FakeModel,
    receiver: undefined as unknown as CallbackReceiver,
    async config(hooks: Record<string, unknown> = {}) {
      const dir = tmpDir('hookrelay-callbacks-');
      return {
        dir,
        config: {
          server: { host: '127.0.0.1', port: await freePort() },
          dataDir: `${dir}/data`,
          hooks: { token: CALLBACK_TOKEN, callbackSecret: secret, ...hooks },
          agent: { baseUrl: world.model.baseUrl, model: 'fake' },
          heartbeat: { everySeconds: 3600 },
        },
      };
    },
  };
  beforeEach(async () => {
    world.model = await startFakeModel([{ match: 'fail me', status: 400, error: { message: 'bad request' } }, { reply: 'the answer' }]);
    world.receiver = await startCallbackReceiver(secret);
  });
  afterEach(async () => {
    await world.receiver.close();
    await world.model.close();
  });
  return world;
}
