/**
 * How a request target is read, shared by the two places that must read it alike (STYLE.md
 * #13, #14): the gate routes every request on {@link parseTarget}'s path (http/routes-table.ts),
 * and the config loader refuses a `hooks.path` or `match.path` that no parsed path could ever
 * equal, or a mapping named like a built-in endpoint ({@link routeKind}). Below both, so that
 * config/ need not import http/.
 */

/** What the NAME in `{hooks.path}/NAME` names: a built-in endpoint, a mapped hook, or (empty) nothing. */
export type HookRouteKind = 'wake' | 'agent' | 'events' | 'runs' | 'run' | 'mapped' | 'none';

/** Classifies the NAME part of `{hooks.path}/NAME`; also how the loader finds reserved names. */
export function routeKind(name: string): HookRouteKind {
  if (name === '') return 'none';
  if (name === 'wake') return 'wake';
  if (name === 'agent') return 'agent';
  if (name === 'events') return 'events';
  if (name.startsWith('runs/') && name.length > 5 && name.indexOf('/', 5) === -1) return 'run';
  if (name === 'runs') return 'runs';
  return 'mapped';
}

/** The path and query of a request target, normalised. */
export interface Target {
  path: string;
  query: string;
}

// Absolute-form (RFC 9112 §3.2.2), which Node passes on as the raw URL: the authority is ignored.
const ABSOLUTE = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;
// What only the slow path handles: percent-escapes, backslashes, a fragment, empty or dot
// segments, a trailing slash. Plain paths (nearly every request) skip all of it.
const IRREGULAR = /[%\\#]|\/\/|\/\.\.?(?:\/|$)|.\/$/;
const CONTROL = /\p{Cc}/u;

/**
 * Parses a raw request target into a normalised path and the raw query, or undefined when it
 * cannot be one (not origin- or absolute-form, a bad percent-escape, a control character).
 * The path is percent-decoded once, `\` is read as `/` (as the WHATWG URL parser does for
 * http), empty and `.` segments are dropped and `..` removes its parent (RFC 3986 §5.2.4), so
 * every spelling of a path — `/hooks//wake`, `/x/../hooks/wake`, `/%68ooks/wake`,
 * `http://h/hooks/wake` — is decided on as the one path it names.
 */
export function parseTarget(url: string): Target | undefined {
  let rest = url;
  if (rest.charCodeAt(0) !== 0x2f) {
    const authority = ABSOLUTE.exec(rest);
    if (!authority) return undefined;
    rest = rest.slice(authority[0].length);
    if (rest.charCodeAt(0) !== 0x2f) rest = `/${rest}`;
  }
  const q = rest.indexOf('?');
  let raw = q === -1 ? rest : rest.slice(0, q);
  let query = q === -1 ? '' : rest.slice(q + 1);
  if (!IRREGULAR.test(raw) && !query.includes('#')) return { path: raw, query };
  const hash = rest.indexOf('#');
  if (hash !== -1) {
    // A fragment is never part of the target (RFC 9110 §7.1); a client that sends one anyway
    // means the path before it.
    if (q === -1 || hash < q) [raw, query] = [rest.slice(0, hash), ''];
    else query = query.slice(0, query.indexOf('#'));
  }
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw.replaceAll('\\', '/'));
  } catch {
    return undefined;
  }
  if (CONTROL.test(decoded)) return undefined;
  const segments: string[] = [];
  for (const segment of decoded.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  return { path: `/${segments.join('/')}`, query };
}
