#!/usr/bin/env node
// The `hookrelay` bin. TypeScript runs through tsx without a build step; we install tsx's
// in-thread CommonJS hook rather than its ESM loader, which runs on an extra loader thread
// of its own: the CommonJS hook starts about twice as fast and keeps ~30 MiB of resident
// memory off every process (both are benchmark figures; see README "Performance").
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
require('tsx/cjs/api').register();
const { main } = require('./cli.ts');
await main(process.argv);
