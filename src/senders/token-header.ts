import type { Codec } from './descriptor.js';
import { header } from './descriptor.js';

/** A header that carries the shared secret itself (gitlab, telegram): compared as a digest, in constant time. */
export function tokenHeader(name: string): Codec {
  const key = name.toLowerCase();
  return {
    algorithm: 'equals',
    headers: [name],
    form: 'the secret',
    read(req) {
      const value = header(req, key);
      return value === undefined ? 'missing' : { given: [Buffer.from(value)], parts: {} };
    },
    message: () => [],
    write: (secret) => ({ [key]: secret.toString() }),
  };
}
