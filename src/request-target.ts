/** How a request target is read, by the gate and by the config loader alike (STYLE.md #13, #14). */

export type HookRouteKind = 'wake' | 'agent' | 'events' | 'runs' | 'run' | 'mapped' | 'none';

const FIXED_ROUTES: ReadonlyMap<string, HookRouteKind> = new Map([['', 'none'], ['wake', 'wake'], ['agent', 'agent'], ['events', 'events'], ['runs', 'runs']]);

export function routeKind(name: string): HookRouteKind {
  return FIXED_ROUTES.get(name) ?? (/^runs\/[^/]+$/.test(name) ? 'run' : 'mapped');
}

export interface Target {
  path: string;
  query: string;
}

// Absolute-form (RFC 9112 §3.2.2), which Node passes on as the raw URL: the authority is ignored.
const ABSOLUTE = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;
// Only these need the full parse; plain paths skip it.
const IRREGULAR = /[%\\#]|\/\/|\/\.\.?(?:\/|$)|.\/$/;
const CONTROL = /\p{Cc}/u;

/** Percent-decoded once, `\` as `/` (WHATWG URL), dot segments removed (RFC 3986 §5.2.4); undefined when not a target. */
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
    // A fragment is never part of the target (RFC 9110 §7.1).
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
