import { randomFillSync } from 'node:crypto';

/** UUIDv7 (RFC 9562 §5.7) with a 12-bit counter (§6.2 method 1): ids sort in creation order. */

const POOL_IDS = 256;
const ID_BYTES = 10; // 2 to seed the counter, 8 for the variant and 62 random bits
const pool = Buffer.alloc(ID_BYTES * POOL_IDS);
let poolAt = pool.length;
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

let lastMs = -1;
let counter = 0;

export function uuidv7(now: number = Date.now()): string {
  if (poolAt === pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const r = poolAt;
  poolAt += ID_BYTES;
  if (now > lastMs) {
    lastMs = now;
    // A random start with the top bit clear leaves room to count up within the millisecond.
    counter = ((pool[r]! << 8) | pool[r + 1]!) & 0x7ff;
  } else if (++counter > 0xfff) {
    // 4096 ids in one millisecond (or the clock went back): borrow the next one (§6.2).
    lastMs++;
    counter = 0;
  }
  const ms = lastMs;
  const hi = Math.floor(ms / 0x10000); // the top 32 of the 48 bits
  return (
    HEX[(hi >>> 24) & 0xff]! + HEX[(hi >>> 16) & 0xff]! + HEX[(hi >>> 8) & 0xff]! + HEX[hi & 0xff]! + '-' +
    HEX[(ms >>> 8) & 0xff]! + HEX[ms & 0xff]! + '-' +
    HEX[0x70 | (counter >>> 8)]! + HEX[counter & 0xff]! + '-' +
    HEX[0x80 | (pool[r + 2]! & 0x3f)]! + HEX[pool[r + 3]!]! + '-' +
    HEX[pool[r + 4]!]! + HEX[pool[r + 5]!]! + HEX[pool[r + 6]!]! + HEX[pool[r + 7]!]! + HEX[pool[r + 8]!]! + HEX[pool[r + 9]!]!
  );
}
