// Entry of a transform worker process (transform-pool.ts forks it). It installs tsx's
// CommonJS hook itself — the same in-process hook as src/bin.mjs — to run
// transform-worker.ts and TypeScript transforms, whatever flags started the gateway.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
require('tsx/cjs/api').register();
require('./transform-worker.ts');
