import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { EventEmitter } from 'node:events';

/** The session cookie's name. */
export const COOKIE = 'hookrelay_console';
/** A session lasts this long from sign-in (fixed, not sliding: an open tab does not keep it alive). */
export const SESSION_SECONDS = 12 * 60 * 60;

export type Sessions = ReturnType<typeof createSessions>;

/** Console sessions: a cookie `<id>.<expires>.<mac>` under a key per process and admin tokens; only revocations are kept. */
export function createSessions() {
  const key = randomBytes(32);
  const revoked = new Map<string, number>();
  // An event per session id, heard by its streams (an id is 22 base64url characters: never `error`).
  const ends = new EventEmitter().setMaxListeners(0);
  let ended = false;
  const mac = (payload: string) => createHmac('sha256', key).update(payload).digest();

  return {
    /** A new session's cookie value. */
    issue(nowMs: number): string {
      const payload = `${randomBytes(16).toString('base64url')}.${Math.floor(nowMs / 1000) + SESSION_SECONDS}`;
      return `${payload}.${mac(payload).toString('base64url')}`;
    },
    /** The session id of a cookie value that is genuine, unexpired and not revoked; else undefined. */
    verify(value: string | undefined, nowMs: number): string | undefined {
      if (ended || value === undefined) return undefined;
      const parts = value.split('.');
      if (parts.length !== 3) return undefined;
      const [id, expires, given] = parts as [string, string, string];
      const expected = mac(`${id}.${expires}`);
      const presented = Buffer.from(given, 'base64url');
      if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) return undefined;
      if (!(Number(expires) * 1000 > nowMs) || revoked.has(id)) return undefined;
      return id;
    },
    /** Logout: the session ends now and its event streams are closed. */
    revoke(id: string, nowMs: number): void {
      for (const [old, until] of revoked) if (until <= nowMs) revoked.delete(old);
      revoked.set(id, nowMs + SESSION_SECONDS * 1000);
      ends.emit(id);
    },
    /** Registers a stream to close when session `id` ends; returns its unregistration. */
    onEnd(id: string, close: () => void): () => void {
      ends.once(id, close);
      return () => ends.off(id, close);
    },
    /** Ends every session (token rotation, shutdown): closes every stream; no cookie verifies after. */
    endAll(): void {
      ended = true;
      for (const id of ends.eventNames()) ends.emit(id);
    },
  };
}
