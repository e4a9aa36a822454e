import { BlockList, isIP } from 'node:net';
import { addTrusted, fold } from './address-rules.js';

/** A callback URL's target is the sender's choice, so it is checked before anything is accepted (CONTRACT.md §14). */

export const MAX_CALLBACK_URL_LENGTH = 2048;

export type HostRule = (hostname: string) => boolean;

/** An address or CIDR entry matches only a literal address: a name is never resolved to be matched. */
export function compileHostRule(entries: readonly string[]): HostRule {
  if (entries.length === 0) return () => true;
  const names = new Set<string>();
  const suffixes: string[] = [];
  const ranges = new BlockList();
  for (const entry of entries) {
    const e = entry.trim().toLowerCase();
    if (isIP(fold(e.split('/')[0]!)) !== 0) addTrusted(ranges, e);
    else if (e.startsWith('*.') && HOST_NAME.test(e.slice(2))) suffixes.push(e.slice(1));
    else if (HOST_NAME.test(e)) names.add(e);
    else throw new Error(`"${entry}" is not a host name, *.domain, IP address or CIDR range`);
  }
  return (hostname) => {
    const h = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
    const ip = fold(h);
    const version = isIP(ip);
    if (version !== 0) return ranges.check(ip, version === 6 ? 'ipv6' : 'ipv4');
    return names.has(h) || suffixes.some((s) => h.endsWith(s));
  };
}

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*\.?$/;

/** Never echoes the URL: it may carry a token in its query. */
export function callbackUrlProblem(url: string, allowed: HostRule): string | undefined {
  if (url.length > MAX_CALLBACK_URL_LENGTH) return `must be at most ${MAX_CALLBACK_URL_LENGTH} characters`;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'must be an absolute http:// or https:// URL';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return `must be an http:// or https:// URL (not ${u.protocol.slice(0, 20)})`;
  if (u.username !== '' || u.password !== '') return 'must not carry credentials (user:password@): the callback is signed with hooks.callbackSecret instead';
  if (!allowed(u.hostname)) return `has a host that hooks.callbackHosts does not allow (${u.hostname.slice(0, 100)}): add it there, or call back to an allowed host`;
  return undefined;
}
