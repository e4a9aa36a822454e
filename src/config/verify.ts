import type { ConfigProblem } from './errors.js';
import type { Obj } from './read.js';
import { SENDERS } from '../senders/index.js';
import type { SenderDescriptor } from '../senders/descriptor.js';

const BY_SCHEME = new Map(SENDERS.map((d) => [d.scheme, d]));
const CREDENTIAL_KEYS = { secret: ['secret', 'secrets'], publicKey: ['publicKey'], basic: ['username', 'password'], handshake: [] } as const;

/** The `verify` keys a scheme takes: its credential's, its own, `toleranceSeconds` when timestamped, `url` when it signs the URL. */
function takes(d: SenderDescriptor): string[] {
  return ['scheme', ...CREDENTIAL_KEYS[d.credential], ...(d.takes ?? []), ...(d.tolerance !== undefined ? ['toleranceSeconds'] : []), ...(d.signsUrl ? ['url'] : [])];
}

/** The schemes that take `key`, for "only applies to …". */
function takenBy(key: string): string {
  const list = SENDERS.filter((d) => takes(d).includes(key)).map((d) => d.scheme);
  return list.length === 1 ? `scheme ${list[0]}` : `the schemes ${list.join(', ')}`;
}

/** The load checks of `verify` and `auth` (CONTRACT.md §8, §15) that the schema cannot say, from the scheme's descriptor; never quotes a secret. */
export function verifyProblems(m: Obj, path: string): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const v = m.verify;
  if (m.auth === 'signature' && v === undefined) {
    problems.push({ path: `${path}.auth`, message: 'signature needs verify: say how the sender signs its requests (verify.scheme and verify.secret)' });
  }
  if (typeof v !== 'object' || v === null) return problems;
  const at = `${path}.verify`;
  if (typeof m.match?.path !== 'string' || m.match.path === '') {
    problems.push({ path: `${path}.match.path`, message: 'is required with verify: the signature is checked before the body is parsed, so the mapping must be known from the request path (POST {hooks.path}/NAME)' });
  }
  const d = BY_SCHEME.get(v.scheme);
  if (d === undefined) return problems;
  const own = takes(d);
  for (const key of Object.keys(v)) {
    if (!own.includes(key)) problems.push({ path: `${at}.${key}`, message: `only applies to ${takenBy(key)} (${d.scheme} does not take it): remove it` });
  }
  if (d.credential === 'secret') {
    if (v.secret !== undefined && v.secrets !== undefined) problems.push({ path: `${at}.secrets`, message: 'give secret or secrets (a list, for rotation), not both' });
    if (v.secret === undefined && v.secrets === undefined) problems.push({ path: `${at}.secret`, message: 'is required: the signing secret the sender shows (or secrets, a list of them, for rotation)' });
  } else if (d.credential === 'publicKey') {
    if (v.publicKey === undefined) problems.push({ path: `${at}.publicKey`, message: `is required with scheme ${d.scheme}: the public key the sender shows` });
  } else if (d.credential === 'basic') {
    for (const key of CREDENTIAL_KEYS.basic) {
      if (v[key] === undefined) problems.push({ path: `${at}.${key}`, message: `is required with scheme ${d.scheme}: the ${key} you give the sender for Basic auth` });
    }
  }
  for (const [key, what] of Object.entries(d.needs ?? {})) {
    if (v[key] === undefined) problems.push({ path: `${at}.${key}`, message: `is required with scheme ${d.scheme}: ${what}` });
  }
  problems.push(...(d.problems?.(v, at) ?? []));
  return problems;
}

/**
 * A scheme that signs the URL needs the URL the sender was given: `verify.url`, or `server.publicUrl`
 * to join with the path. Neither has a query: the one each request arrives with is appended
 * (http/signatures.ts signedUrl), since senders add to it (Twilio's `bodySHA256`).
 */
export function publicUrlProblems(mappings: unknown[], publicUrl: unknown, senders: ReadonlyMap<string, SenderDescriptor> = BY_SCHEME): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const withQuery = (url: unknown) => typeof url === 'string' && /[?#]/.test(url);
  const appended = 'the query a request arrives with is appended to it, as the sender signed it: leave the query out';
  if (withQuery(publicUrl)) problems.push({ path: 'server.publicUrl', message: `must not have a query or fragment: ${appended}` });
  mappings.forEach((m, i) => {
    const v = (m as Obj | undefined)?.verify;
    const d = typeof v?.scheme === 'string' ? senders.get(v.scheme) : undefined;
    if (!d?.signsUrl) return;
    if (withQuery(v.url)) problems.push({ path: `hooks.mappings[${i}].verify.url`, message: `must not have a query or fragment: ${appended} (a ?token= too)` });
    if (v.url === undefined && typeof publicUrl !== 'string') {
      problems.push({ path: `hooks.mappings[${i}].verify.url`, message: `is required with scheme ${d.scheme} unless server.publicUrl is set: ${d.scheme} signs the URL it was sent to, so give that URL (or server.publicUrl, e.g. https://hooks.example.com, to join with the request's path and query)` });
    }
  });
  return problems;
}
