// Entry of a transform worker thread (transform-pool.ts starts it). Hooks installed on the
// main thread do not reach a worker, so it installs tsx's CommonJS hook itself — the same
// in-thread hook as src/bin.mjs — to run transform-worker.ts and TypeScript transforms.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
require('tsx/cjs/api').register();
require('./transform-worker.ts');
