import type { Algorithm, Codec } from './descriptor.js';
import { BASE64, HEX, header } from './descriptor.js';

const DIGEST_BYTES = { 'hmac-sha1': 20, 'hmac-sha256': 32, 'hmac-sha512': 64 } as const;

/** An HMAC of the body alone, in one header: `{prefix}{digest}` (github, meta, hmac and the senders that sign the same way). */
export function bodyHmac(name: string, algorithm: keyof typeof DIGEST_BYTES & Algorithm, encoding: 'hex' | 'base64', prefix = ''): Codec {
  const key = name.toLowerCase();
  const bytes = DIGEST_BYTES[algorithm];
  const form = encoding === 'hex' ? HEX(bytes) : BASE64;
  return {
    algorithm,
    headers: [name],
    form: `${prefix}<${encoding === 'hex' ? `${bytes * 2} hex digits` : 'base64 digest'}>`,
    read(req) {
      const value = header(req, key);
      if (value === undefined) return 'missing';
      if (!value.startsWith(prefix) || !form.test(value.slice(prefix.length))) return 'malformed';
      const given = Buffer.from(value.slice(prefix.length), encoding);
      return given.length === bytes ? { given: [given], parts: {} } : 'malformed';
    },
    message: (req) => [req.body],
    write: (signature) => ({ [key]: `${prefix}${signature.toString(encoding)}` }),
  };
}
