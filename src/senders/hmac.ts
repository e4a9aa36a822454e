import type { SenderDescriptor } from './descriptor.js';
import { bodyHmac } from './body-hmac.js';

/** Any sender that signs the body alone with an HMAC in one header, described by the mapping. */
export const hmac: SenderDescriptor = {
  scheme: 'hmac',
  checks: 'an HMAC of the body in the header you name (`header`, `algorithm`, `encoding`, `prefix`)',
  credential: 'secret',
  takes: ['header', 'algorithm', 'encoding', 'prefix'],
  needs: { header: 'name the request header that carries the signature' },
  codec: (v) => bodyHmac(v.header!, `hmac-${v.algorithm ?? 'sha256'}`, v.encoding ?? 'hex', v.prefix ?? ''),
  docs: {
    sender: 'Any sender that signs the body with an HMAC',
    settings: 'The sender\'s webhook settings: URL `https://<your host>{hooks.path}/NAME`; its signing secret = `verify.secret`; its signature header, hash and encoding in `verify`.',
    mapping: 'match: { path: NAME }\nauth: signature\nverify: { scheme: hmac, secret: "${WEBHOOK_SECRET}", header: X-Signature, algorithm: sha256, encoding: hex }\naction: wake\ntextTemplate: "Event {{type}}"',
  },
};
