import type { ConfigProblem } from './errors.js';
import type { Obj } from './read.js';

const TIMESTAMPED_SCHEMES: readonly string[] = ['stripe', 'slack', 'standard-webhooks'];
const HMAC_KEYS = ['header', 'algorithm', 'encoding', 'prefix'] as const;
const WHSEC = 'whsec_';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A Standard Webhooks secret's key: the base64 after an optional `whsec_`, or undefined when not base64. */
export function standardWebhooksKey(secret: string): Buffer | undefined {
  const text = secret.startsWith(WHSEC) ? secret.slice(WHSEC.length) : secret;
  return text !== '' && BASE64.test(text) ? Buffer.from(text, 'base64') : undefined;
}

/** The load checks of `verify` and `auth` (CONTRACT.md §8) that the schema cannot say; never quotes a secret. */
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
  if (v.secret !== undefined && v.secrets !== undefined) problems.push({ path: `${at}.secrets`, message: 'give secret or secrets (a list, for rotation), not both' });
  if (v.secret === undefined && v.secrets === undefined) problems.push({ path: `${at}.secret`, message: 'is required: the signing secret the sender shows (or secrets, a list of them, for rotation)' });
  for (const key of HMAC_KEYS) {
    if (v.scheme !== 'hmac' && v[key] !== undefined) problems.push({ path: `${at}.${key}`, message: `only applies to scheme hmac (${v.scheme} has its own header and digest): remove it` });
  }
  if (v.scheme === 'hmac' && v.header === undefined) problems.push({ path: `${at}.header`, message: 'is required with scheme hmac: name the request header that carries the signature' });
  if (v.scheme === 'meta' && v.verifyToken === undefined) {
    problems.push({ path: `${at}.verifyToken`, message: 'is required with scheme meta: the Verify Token you type into Meta\'s webhook settings, which Meta sends back as hub.verify_token in its verification request (GET {hooks.path}/NAME?hub.mode=subscribe&hub.verify_token=…&hub.challenge=…)' });
  }
  if (v.scheme !== 'meta' && v.verifyToken !== undefined) problems.push({ path: `${at}.verifyToken`, message: `only applies to scheme meta (Meta's verification request): remove it` });
  if (v.toleranceSeconds !== undefined && !TIMESTAMPED_SCHEMES.includes(v.scheme)) {
    problems.push({ path: `${at}.toleranceSeconds`, message: `only applies to the timestamped schemes (${TIMESTAMPED_SCHEMES.join(', ')}): remove it` });
  }
  if (v.scheme === 'standard-webhooks') {
    const bad = (s: unknown) => typeof s === 'string' && standardWebhooksKey(s) === undefined;
    const message = 'must be the whsec_… secret the sender shows (base64 after whsec_)';
    if (bad(v.secret)) problems.push({ path: `${at}.secret`, message });
    if (Array.isArray(v.secrets)) v.secrets.forEach((s: unknown, i: number) => bad(s) && problems.push({ path: `${at}.secrets[${i}]`, message }));
  }
  return problems;
}
