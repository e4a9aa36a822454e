import { createHash } from 'node:crypto';
import { parse as parseLegacy, stringify as stringifyLegacy } from 'node:querystring';
import type { SenderDescriptor } from './descriptor.js';
import { BASE64, header } from './descriptor.js';
import { append } from '../append.js';
import { readsAsForm } from '../form-body.js';

const BODY_HASH = 'bodySHA256';
const AUTHORITY = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)/i;

/**
 * Twilio, as the `twilio` library's validateRequest and validateRequestWithBody check it (the URL as
 * given and as `new URL()` writes it, with and without its default port; a field's several values
 * deduplicated and sorted): https://www.twilio.com/docs/usage/security#validating-requests
 */
export const twilio: SenderDescriptor = {
  scheme: 'twilio',
  checks: '`X-Twilio-Signature`, base64 HMAC-SHA1 of the URL followed by the form fields sorted by name (a JSON body: the URL alone, its `bodySHA256` the body\'s SHA-256)',
  credential: 'secret',
  signsUrl: true,
  codec: () => ({
    algorithm: 'hmac-sha1',
    headers: ['X-Twilio-Signature'],
    form: '<base64 HMAC-SHA1>',
    read(req) {
      const value = header(req, 'x-twilio-signature');
      if (value === undefined) return 'missing';
      const given = BASE64.test(value) ? Buffer.from(value, 'base64') : undefined;
      return given?.length === 20 ? { given: [given], parts: {} } : 'malformed';
    },
    message: (req) => [Buffer.from(req.url! + (signedFields(req.url!, req.body, req.headers['content-type']) ?? ''))],
    messages(req) {
      const fields = signedFields(req.url!, req.body, req.headers['content-type']);
      return fields === undefined ? [] : urlVariants(req.url!).map((url) => [Buffer.from(url + fields)]);
    },
    write: (signature) => ({ 'x-twilio-signature': signature.toString('base64') }),
  }),
  docs: {
    sender: 'Twilio (SMS, WhatsApp, Voice)',
    settings: 'Console → Phone Numbers → the number → Messaging (or Voice) → "A message comes in": Webhook `https://<your host>{hooks.path}/NAME`, HTTP POST; set `server.publicUrl: https://<your host>` (or that URL as `verify.url`); Account Info → Auth Token = `verify.secret`.',
    mapping: 'match: { path: NAME }\nauth: signature\nverify: { scheme: twilio, secret: "${TWILIO_AUTH_TOKEN}" }\nidempotencyKey: "twilio:{{MessageSid}}"\naction: agent\nname: SMS\nsessionKey: "hook:sms:{{From}}"\nmessageTemplate: "SMS from {{From}}: {{Body}}"\nresponse: { status: 200, contentType: text/xml, body: "<Response/>" }',
  },
};

/** What follows the URL in the signed text; undefined when `bodySHA256` is not the body's SHA-256, or a body without it is no form. */
function signedFields(url: string, body: Buffer, contentType: string | string[] | undefined): string | undefined {
  const q = url.indexOf('?');
  const hash = q === -1 ? null : new URLSearchParams(url.slice(q + 1)).get(BODY_HASH);
  if (hash !== null) return hash === createHash('sha256').update(body).digest('hex') ? '' : undefined;
  // Without it only form fields are signed: a body the listener reads as JSON would be covered by nothing.
  const text = body.toString('utf8');
  if (text.trim() !== '' && !readsAsForm(typeof contentType === 'string' ? contentType : undefined, text)) return undefined;
  const fields = new Map<string, string[]>();
  for (const [k, v] of new URLSearchParams(text)) append(fields, k, v);
  let out = '';
  for (const k of [...fields.keys()].sort()) {
    const values = fields.get(k)!;
    for (const v of values.length === 1 ? values : [...new Set(values)].sort()) out += k + v;
  }
  return out;
}

/** The URLs the library tries, in its order (the last: the query as Node's legacy querystring writes it). */
function urlVariants(url: string): string[] {
  const out = [withoutPort(url), withPort(url)];
  let normal: string;
  try {
    normal = new URL(url).toString();
  } catch {
    return out;
  }
  for (const u of [withoutPort(normal), withPort(normal)]) out.push(u, legacyQuery(u));
  return [...new Set(out)];
}

function hostPort(url: string): { prefix: string; scheme: string; host: string; port: string; rest: string } | undefined {
  const m = AUTHORITY.exec(url);
  if (!m) return undefined;
  const authority = m[2]!;
  const hostAndPort = authority.slice(authority.lastIndexOf('@') + 1);
  const userInfo = authority.slice(0, authority.lastIndexOf('@') + 1);
  // A colon starts the port only after an IPv6 literal's closing bracket.
  const colon = hostAndPort.indexOf(':', hostAndPort.lastIndexOf(']') + 1);
  return {
    prefix: m[1]! + userInfo,
    scheme: m[1]!.toLowerCase(),
    host: colon === -1 ? hostAndPort : hostAndPort.slice(0, colon),
    port: colon === -1 ? '' : hostAndPort.slice(colon),
    rest: url.slice(m[0].length),
  };
}

function withoutPort(url: string): string {
  const p = hostPort(url);
  return p ? p.prefix + p.host + p.rest : url;
}

function withPort(url: string): string {
  const p = hostPort(url);
  if (!p || p.port !== '') return url;
  return p.prefix + p.host + (p.scheme === 'https://' ? ':443' : ':80') + p.rest;
}

function legacyQuery(url: string): string {
  const q = url.indexOf('?');
  return q === -1 || q === url.length - 1 ? url : `${url.slice(0, q)}?${stringifyLegacy(parseLegacy(url.slice(q + 1)))}`;
}
