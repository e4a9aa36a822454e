#!/usr/bin/env -S node --max-semi-space-size=4
// The `hookrelay` bin. TypeScript runs through tsx without a build step; we install tsx's
// in-thread CommonJS hook rather than its ESM loader, which runs on an extra loader thread
// of its own: the CommonJS hook starts about twice as fast and keeps ~30 MiB of resident
// memory off every process (both measured: see docs/performance.md).
// --max-semi-space-size=4 (MiB) caps V8's young generation, which otherwise grows to 2 × 16
// MiB under load: ~25 MiB less resident for a few more (cheap) scavenges. A V8 heap flag
// only works on the command line (or NODE_OPTIONS), hence the shebang; `npm start` and
// `npm run bench` pass it too.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
require('tsx/cjs/api').register();
const { main } = require('./cli/index.ts');
await main(process.argv);
