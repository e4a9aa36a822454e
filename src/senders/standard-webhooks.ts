import type { IncomingHttpHeaders } from 'node:http';
import type { KeyProblem, SenderDescriptor, SenderDocs, VerifyKeys } from './descriptor.js';
import { BASE64, SECONDS, header } from './descriptor.js';

const WHSEC = 'whsec_';
const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** The message id a fixture's signature signs when the fixture names none. */
const FIXTURE_MESSAGE_ID = 'msg_fixture';

/** A Standard Webhooks secret's key: the base64 after an optional `whsec_`, or undefined when not base64. */
export function standardWebhooksKey(secret: string): Buffer | undefined {
  const text = secret.startsWith(WHSEC) ? secret.slice(WHSEC.length) : secret;
  return text !== '' && STRICT_BASE64.test(text) ? Buffer.from(text, 'base64') : undefined;
}

/** The id header the signature covers, the idempotency key (CONTRACT.md §8): `webhook-id`, else Svix's `svix-id`. */
function idHeader(headers: IncomingHttpHeaders): 'webhook-id' | 'svix-id' | undefined {
  if (headers['webhook-id'] !== undefined) return 'webhook-id';
  return headers['svix-id'] !== undefined ? 'svix-id' : undefined;
}

/**
 * Standard Webhooks (and Svix's `svix-*` names): an HMAC-SHA256 of `{id}.{timestamp}.{body}`, other
 * versions ignored: https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md
 */
export const standardWebhooks: SenderDescriptor = {
  scheme: 'standard-webhooks',
  aliases: ['svix', 'standardwebhooks'],
  checks: '`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,…` (or Svix\'s `svix-*`), base64 HMAC-SHA256 of `{id}.{timestamp}.{body}` with the `whsec_` secret; the id is the idempotency key',
  credential: 'secret',
  tolerance: 300,
  timestamp: 'webhook-timestamp',
  idHeader,
  keys: (v) => (v.secrets ?? [v.secret!]).map((s) => standardWebhooksKey(s)!),
  codec: () => ({
    algorithm: 'hmac-sha256',
    headers: ['webhook-id', 'webhook-timestamp', 'webhook-signature'],
    form: 'v1,<base64> (space-separated) with a timestamp in seconds',
    read(req) {
      const id = header(req, 'webhook-id') ?? header(req, 'svix-id');
      const ts = header(req, 'webhook-timestamp') ?? header(req, 'svix-timestamp');
      const value = header(req, 'webhook-signature') ?? header(req, 'svix-signature');
      if (id === undefined || ts === undefined || value === undefined) return 'missing';
      if (!SECONDS.test(ts)) return 'malformed';
      const given = value.split(' ').filter((item) => item.startsWith('v1,') && BASE64.test(item.slice(3)))
        .map((item) => Buffer.from(item.slice(3), 'base64')).filter((sig) => sig.length === 32);
      return { given, parts: { id, timestamp: ts } };
    },
    message: (req, parts) => [Buffer.from(`${parts.id}.${parts.timestamp}.`), req.body],
    stamp: (req) => ({ id: header(req, 'webhook-id') ?? header(req, 'svix-id') ?? FIXTURE_MESSAGE_ID, timestamp: String(req.now) }),
    write: (signature, parts) => ({ 'webhook-id': parts.id!, 'webhook-timestamp': parts.timestamp!, 'webhook-signature': `v1,${signature.toString('base64')}` }),
  }),
  problems: whsecProblems,
  docs: {
    sender: 'Any Standard Webhooks sender (Svix and others)',
    settings: 'The sender\'s webhook settings: endpoint URL `https://<your host>{hooks.path}/NAME`; its signing secret (`whsec_…`) = `verify.secret`.',
    mapping: 'match: { path: NAME }\nauth: signature\nverify: { scheme: standard-webhooks, secret: "${WEBHOOK_SECRET}" }\naction: wake\ntextTemplate: "Event {{type}}"',
  },
};

/** Each secret must be the `whsec_…` base64 the sender shows. */
export function whsecProblems(v: VerifyKeys, at: string): KeyProblem[] {
  const message = 'must be the whsec_… secret the sender shows (base64 after whsec_)';
  const bad = (s: unknown) => typeof s === 'string' && standardWebhooksKey(s) === undefined;
  const problems: KeyProblem[] = [];
  if (bad(v.secret)) problems.push({ path: `${at}.secret`, message });
  if (Array.isArray(v.secrets)) v.secrets.forEach((s, i) => bad(s) && problems.push({ path: `${at}.secrets[${i}]`, message }));
  return problems;
}

/** A sender that signs as Standard Webhooks, under its own name (CONTRACT.md §15). */
export function standardWebhooksAs(scheme: string, sender: string, docs: Omit<SenderDocs, 'sender'>): SenderDescriptor {
  return { ...standardWebhooks, scheme, aliases: [], checks: `Standard Webhooks (\`webhook-*\` or \`svix-*\` headers) with the \`whsec_\` secret ${sender} shows`, docs: { sender, ...docs } };
}
