import { SENDERS } from '../senders/index.js';
import type { SenderDescriptor } from '../senders/descriptor.js';
import { isLoopback } from './token.js';
import type { Config, MappingConfig } from './types.js';

/** Shorter secrets than this are guessable enough to warn about on a reachable host. */
const MIN_SECRET_LENGTH = 16;

/** A `verify` for a sender of the catalog: its scheme, the keys it needs, its credential. */
function suggestion(d: SenderDescriptor): string {
  const needs = Object.keys(d.needs ?? {}).map((k) => `, ${k}: \${…}`).join('');
  const credential = { secret: ', secret: ${…}', publicKey: ', publicKey: …', basic: ', username: …, password: ${…}', handshake: '' }[d.credential];
  return `scheme: ${d.scheme}${needs}${credential}`;
}

/** Senders known to sign their webhooks (the catalog's, by name), and the `verify` that checks them. */
const SIGNING_SENDERS: readonly [RegExp, string][] = [
  ...SENDERS.filter((d) => d.scheme !== 'hmac' && !d.unsignedToo).map((d) => [word([d.scheme, ...(d.aliases ?? [])].join('|')), suggestion(d)] as [RegExp, string]),
  [word('typeform'), 'scheme: hmac, header: Typeform-Signature, encoding: base64, prefix: "sha256=", secret: ${…}'],
];

function word(names: string): RegExp {
  return new RegExp(`(?:^|[^a-z0-9])(?:${names})(?:[^a-z0-9]|$)`, 'i');
}

/** What `hookrelay check` warns about in a valid config: unfenced payload text, signing senders without `verify`, shadowed mappings. */
export function configWarnings(config: Readonly<Config>): string[] {
  const out: string[] = [];
  if (config.hooks.allowUnsafeExternalContent) {
    out.push('hooks.allowUnsafeExternalContent: true lets payload text reach the model without the untrusted-content fence, for every mapping that does not set it to false');
  }
  if (!isLoopback(config.server.host)) out.push(...shortSecrets(config));
  config.hooks.mappings.forEach((m, i) => {
    const at = `hooks.mappings[${i}] ("${m.id}")`;
    if (m.allowUnsafeExternalContent === true) {
      out.push(`${at}: allowUnsafeExternalContent: true lets its payload text reach the model without the untrusted-content fence; a payload can then instruct the agent`);
    }
    if (m.verify) return;
    const named = [m.id, m.match.path ?? ''];
    const hit = SIGNING_SENDERS.find(([re]) => named.some((n) => re.test(n)));
    if (hit) out.push(`${at}: looks like a webhook from a sender that signs its requests, but has no verify: add verify: { ${hit[1]} }`);
  });
  out.push(...shadowed(config.hooks.mappings));
  return out;
}

/**
 * Mappings that can never match (CONTRACT.md §16): an earlier one on the same path and method
 * takes every request they would, having no `when` and no `source` or header they lack. One with
 * a `when` is never counted as covering: what it admits cannot be known without a request.
 */
function shadowed(mappings: readonly MappingConfig[]): string[] {
  const out: string[] = [];
  const covering: { m: MappingConfig; i: number }[] = [];
  mappings.forEach((m, i) => {
    const by = covering.find(({ m: a }) => covers(a, m));
    if (by) {
      const on = `${m.match.method ?? 'POST'} ${m.match.path ?? 'any path'}`;
      out.push(`hooks.mappings[${i}] ("${m.id}") can never match: hooks.mappings[${by.i}] ("${by.m.id}") comes first and takes every ${on} request it would (no source, headers or when narrower than its own): narrow "${by.m.id}" or move "${m.id}" above it`);
    }
    if (m.match.when === undefined) covering.push({ m, i });
  });
  return out;
}

/** Whether every request `b` matches (when aside) is one `a`, which has no `when`, matches. */
function covers(a: MappingConfig, b: MappingConfig): boolean {
  if (a.match.path !== undefined && a.match.path !== b.match.path) return false;
  if ((a.match.method ?? 'POST') !== (b.match.method ?? 'POST')) return false;
  if (a.match.source !== undefined && a.match.source !== b.match.source) return false;
  const wanted = lowerKeys(b.match.headers);
  return Object.entries(lowerKeys(a.match.headers)).every(([name, value]) => Object.hasOwn(wanted, name) && wanted[name] === value);
}

function lowerKeys(headers: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
}

/** Tokens and secrets shorter than {@link MIN_SECRET_LENGTH} on a host others can reach; names paths, never values. */
function shortSecrets(config: Readonly<Config>): string[] {
  const out: string[] = [];
  const why = `is shorter than ${MIN_SECRET_LENGTH} characters while server.host (${config.server.host}) is reachable from other machines: use a long random one, e.g. openssl rand -base64 32`;
  const short = (s: unknown) => typeof s === 'string' && s !== '' && s.length < MIN_SECRET_LENGTH;
  const { hooks, server } = config;
  if (hooks.tokens) hooks.tokens.forEach((e, i) => short(typeof e === 'string' ? e : e.token) && out.push(`hooks.tokens[${i}] ${why}`));
  else if (short(hooks.token)) out.push(`hooks.token ${why}`);
  if (server.adminTokens) server.adminTokens.forEach((t, i) => short(t) && out.push(`server.adminTokens[${i}] ${why}`));
  else if (short(server.adminToken)) out.push(`server.adminToken ${why}`);
  hooks.mappings.forEach((m, i) => {
    if (!m.verify) return;
    if (short(m.verify.secret)) out.push(`hooks.mappings[${i}].verify.secret ${why}`);
    m.verify.secrets?.forEach((s, j) => short(s) && out.push(`hooks.mappings[${i}].verify.secrets[${j}] ${why}`));
  });
  return out;
}
