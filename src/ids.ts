import { randomInt, randomUUID } from 'node:crypto';

/** UUIDv7 (RFC 9562 §5.7) with a 12-bit counter (§6.2 method 1): ids sort in creation order. */

let lastMs = -1;
let counter = 0;

export function uuidv7(now: number = Date.now()): string {
  if (now > lastMs) {
    lastMs = now;
    // A random start with the top bit clear leaves room to count up within the millisecond.
    counter = randomInt(0x800);
  } else if (++counter > 0xfff) {
    // 4096 ids in one millisecond (or the clock went back): borrow the next one (§6.2).
    lastMs++;
    counter = 0;
  }
  const ms = lastMs.toString(16).padStart(12, '0');
  // A v4 UUID's last 17 characters: the RFC 9562 variant and 62 random bits, from Node's entropy cache.
  return `${ms.slice(0, 8)}-${ms.slice(8)}-7${counter.toString(16).padStart(3, '0')}-${randomUUID().slice(19)}`;
}
