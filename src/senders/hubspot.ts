import type { SenderDescriptor } from './descriptor.js';
import { BASE64, header } from './descriptor.js';

const SIGNATURE = 'x-hubspot-signature-v3';
const TIMESTAMP = 'x-hubspot-request-timestamp';
const MILLISECONDS = /^\d{1,16}$/;
/** The `%XX` HubSpot decodes in the URI before signing (the page below lists them). */
const DECODED = /%(3A|2F|3F|40|21|24|27|28|29|2A|2C|3B)/gi;

/**
 * HubSpot v3: `X-HubSpot-Signature-v3`, a base64 HMAC-SHA256 with the app's client secret of
 * method + URI + body + `X-HubSpot-Request-Timestamp` (milliseconds), refused past 5 minutes; as
 * @hubspot/api-client's Signature.isValid (v3), the URI with HubSpot's listed `%XX` decoded:
 * https://developers.hubspot.com/docs/apps/developer-platform/build-apps/authentication/request-validation
 */
export const hubspot: SenderDescriptor = {
  scheme: 'hubspot',
  checks: '`X-HubSpot-Signature-v3`, base64 HMAC-SHA256 of method + URI + body + `X-HubSpot-Request-Timestamp` (milliseconds)',
  credential: 'secret',
  signsUrl: true,
  tolerance: 300,
  timestamp: 'X-HubSpot-Request-Timestamp',
  milliseconds: true,
  codec: () => ({
    algorithm: 'hmac-sha256',
    headers: ['X-HubSpot-Request-Timestamp', 'X-HubSpot-Signature-v3'],
    form: '<base64 HMAC-SHA256> with a timestamp in milliseconds',
    read(req) {
      const value = header(req, SIGNATURE);
      const ts = header(req, TIMESTAMP);
      if (value === undefined || ts === undefined) return 'missing';
      const given = BASE64.test(value) ? Buffer.from(value, 'base64') : undefined;
      return given?.length === 32 && MILLISECONDS.test(ts) ? { given: [given], parts: { timestamp: ts } } : 'malformed';
    },
    message: (req, parts) => [Buffer.from(req.method + req.url!.replace(DECODED, (e) => decodeURIComponent(e))), req.body, Buffer.from(parts.timestamp!)],
    stamp: (req) => ({ timestamp: String(req.now * 1000) }),
    write: (signature, parts) => ({ [TIMESTAMP]: parts.timestamp!, [SIGNATURE]: signature.toString('base64') }),
  }),
  docs: {
    sender: 'HubSpot (app webhooks, v3 signature)',
    settings: 'The app → Webhooks: Target URL `https://<your host>{hooks.path}/NAME` (with `server.publicUrl: https://<your host>`, or that URL as `verify.url`), the subscriptions; the app\'s Auth tab → Client secret = `verify.secret`.',
    mapping: 'match: { path: NAME }\nauth: signature\nverify: { scheme: hubspot, secret: "${HUBSPOT_CLIENT_SECRET}" }\nforEach: "*"\nidempotencyKey: "hubspot:{{eventId}}"\naction: wake\ntextTemplate: "HubSpot {{subscriptionType}} on object {{objectId}}"',
  },
};
