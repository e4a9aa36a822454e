import type { Exchange } from '../http/exchange.js';
import { isHttps } from './hosts.js';
import { answerPage, loginPage, redirect } from './pages.js';
import { readBody } from './read-body.js';
import type { PageDeps } from './routes.js';
import { COOKIE, SESSION_SECONDS } from './session.js';

const LOGIN_MAX_BYTES = 4096;

/** GET `/console/login`: the sign-in page. */
export function loginForm(deps: PageDeps, ex: Exchange): void {
  answerPage(ex, 200, loginPage(deps.adminTokenAt?.()));
}

/** POST `/console/login`: the admin token, under the gate's failure budget; a session cookie on success. */
export async function login(deps: PageDeps, ex: Exchange): Promise<void> {
  const token = new URLSearchParams((await readBody(ex.req, LOGIN_MAX_BYTES)).toString('utf8')).get('token') ?? '';
  const verdict = deps.auth.verify(token, deps.clientAddress(ex.req), 'admin');
  if (!verdict.ok && verdict.code === 'rate_limited') {
    ex.res.setHeader('retry-after', String(verdict.retryAfter));
    answerPage(ex, 429, loginPage(deps.adminTokenAt?.(), `Too many wrong tokens from this address: try again in ${verdict.retryAfter} s.`));
    return;
  }
  if (!verdict.ok) {
    answerPage(ex, 401, loginPage(deps.adminTokenAt?.(), 'That is not the admin token. It is server.adminToken (or server.adminTokens) in the config, or, when none is configured, the one in {dataDir}/admin-token. A hooks token does not sign in.'));
    return;
  }
  const secure = isHttps(ex.req, deps.trustedPeer) ? '; Secure' : '';
  ex.res.setHeader('set-cookie', `${COOKIE}=${deps.sessions.issue(Date.now())}; Path=/console/; Max-Age=${SESSION_SECONDS}; HttpOnly; SameSite=Strict${secure}`);
  redirect(ex, '/console/');
}

/** POST `/console/logout`: the session ends now (its event streams close) and its cookie is cleared. */
export function logout(deps: PageDeps, ex: Exchange): void {
  deps.sessions.revoke(ex.session!, Date.now());
  ex.res.setHeader('set-cookie', `${COOKIE}=; Path=/console/; Max-Age=0; HttpOnly; SameSite=Strict`);
  redirect(ex, '/console/login');
}
