import { createHash, timingSafeEqual } from 'node:crypto';
import { HookError } from '../errors.js';
import { echo, failed, type Handshake } from './handshake.js';

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * Meta's verification request, `GET ?hub.mode=subscribe&hub.verify_token=V&hub.challenge=C`: C
 * when V is the mapping's verifyToken (compared as digests, in constant time), else 403 counted
 * as a failed attempt of its own kind (CONTRACT.md §4, §8).
 * https://developers.facebook.com/docs/graph-api/webhooks/getting-started#verification-requests
 */
export const handshake: Handshake = {
  method: 'GET',
  check: 'own',
  passes: 'verifyToken',
  is: () => true,
  answer(req, ctx) {
    const q = req.query;
    if (q.get('hub.mode') !== 'subscribe') {
      throw new HookError('invalid_payload', 'hub.mode must be subscribe: this GET answers Meta\'s verification request, GET {hooks.path}/NAME?hub.mode=subscribe&hub.verify_token=…&hub.challenge=…');
    }
    const challenge = q.get('hub.challenge');
    if (challenge === null || challenge === '') throw new HookError('invalid_payload', 'hub.challenge is missing: Meta\'s verification request sends the challenge to echo');
    if (!timingSafeEqual(digest(q.get('hub.verify_token') ?? ''), digest(ctx.verify.verifyToken ?? ''))) {
      throw failed(new HookError('forbidden', 'hub.verify_token does not match the mapping\'s verify.verifyToken: type the same Verify Token into Meta\'s webhook settings'), 'verifyToken');
    }
    return echo(challenge, 'hub.challenge');
  },
};
