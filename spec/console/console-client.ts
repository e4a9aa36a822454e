import http from 'node:http';
import { ADMIN_TOKEN } from '../support/in-process.js';

/**
 * The console's sign-in, in one place for the console specs: a POST of the sign-in form from
 * the console's own origin. `token`: what is pasted (the credential the console takes).
 */
export function signIn(base: string, token = ADMIN_TOKEN, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${base}/console/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { origin: base, 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams({ token }).toString(),
  });
}

/** A session cookie (`name=value`) for the console at `base`. */
export async function consoleCookie(base: string, token = ADMIN_TOKEN): Promise<string> {
  const res = await signIn(base, token);
  const set = res.headers.get('set-cookie');
  if (res.status !== 303 || !set) throw new Error(`sign-in answered ${res.status}`);
  return set.split(';')[0]!;
}

export interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/**
 * One request over node:http, which sends the `Host` it is given (fetch always sends the
 * URL's own): what a browser sends after DNS rebinding, or a proxy in front of the gateway.
 */
export function rawRequest(base: string, path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<RawAnswer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path, method: init.method ?? 'GET', headers: init.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(init.body);
  });
}
