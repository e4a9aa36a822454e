import type { Read, SenderDescriptor, VerifyInput } from './descriptor.js';
import { echo, type Handshake } from './handshake.js';

/** `POST ?validationToken=V` → V; it carries no secret, so its form is its check: https://learn.microsoft.com/en-us/graph/change-notifications-delivery-webhooks#notification-endpoint-validation */
const handshake: Handshake = {
  method: 'POST',
  check: 'own',
  is: (req) => req.query.has('validationToken'),
  answer: (req) => echo(req.query.get('validationToken'), 'the query parameter validationToken'),
};

/** Every notification's clientState, when all are one string; 'malformed' when they differ or one has none. */
function clientState(req: VerifyInput): Read {
  let body: unknown;
  try {
    body = JSON.parse(req.body.toString('utf8'));
  } catch {
    return 'missing';
  }
  const list = (body as { value?: unknown } | null)?.value;
  if (!Array.isArray(list) || list.length === 0) return 'missing';
  const states = new Set(list.map((n) => (n !== null && typeof n === 'object' ? (n as Record<string, unknown>).clientState : undefined)));
  const [state] = states;
  return states.size === 1 && typeof state === 'string' ? { given: [Buffer.from(state)], parts: {} } : 'malformed';
}

/** Graph signs nothing: each notification's clientState must be the secret: https://learn.microsoft.com/en-us/graph/change-notifications-delivery-webhooks#receive-notifications */
export const msgraph: SenderDescriptor = {
  scheme: 'msgraph',
  checks: 'every notification\'s `clientState` equals the secret (constant time); the validation `POST ?validationToken=` answered with the token as text/plain',
  credential: 'secret',
  codec: () => ({
    algorithm: 'equals',
    headers: ['clientState'],
    form: 'a JSON body {"value": [notifications]}',
    read: clientState,
    message: () => [],
    write: () => ({}),
    // A fixture is signed by writing the secret as each notification's clientState.
    writeBody(req, secret) {
      let parsed: { value?: unknown };
      try {
        parsed = JSON.parse(req.body.toString('utf8'));
      } catch {
        return req.body;
      }
      if (Array.isArray(parsed?.value)) for (const n of parsed.value) if (n !== null && typeof n === 'object') (n as Record<string, unknown>).clientState = secret.toString('utf8');
      return Buffer.from(JSON.stringify(parsed));
    },
    failureTexts: {
      missing: 'the body carries no notifications ({"value": [...]}) with a clientState: Microsoft Graph sends each with the subscription\'s clientState',
      malformed: 'every notification in value[] must carry the same clientState, the subscription\'s',
      wrong: 'the notifications\' clientState is not the mapping\'s verify.secret: subscribe with clientState set to it',
    },
  }),
  handshake,
  docs: {
    sender: 'Microsoft Graph (change notifications)',
    settings: 'Create the subscription (POST https://graph.microsoft.com/v1.0/subscriptions) with `notificationUrl: "https://<your host>{hooks.path}/NAME"` and `clientState` = `verify.secret`; Graph validates the URL at once.',
    mapping: 'match: { path: NAME }\nauth: signature\nverify: { scheme: msgraph, secret: "${GRAPH_CLIENT_STATE}" }\nforEach: value\naction: wake\ntextTemplate: "Graph {{changeType}} {{resource}}"',
  },
};
