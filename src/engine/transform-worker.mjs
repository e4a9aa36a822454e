// Entry of a transform worker process (transform-pool.ts forks it; the build copies it to
// dist/engine/). It installs tsx's CommonJS hook (in-process, no loader thread) only when
// it is needed, whatever flags started the gateway: for TypeScript transforms, and for
// transform-worker.ts itself when the gateway runs from the sources (the specs), where no
// transform-worker.js is built beside this file (what tsx costs a worker: docs/performance.md).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const built = existsSync(new URL('./transform-worker.js', import.meta.url));
const { specs } = JSON.parse(process.argv[2]);
if (!built || specs.some((s) => /\.[cm]?ts$/i.test(s.file))) require('tsx/cjs/api').register();
if (built) await import('./transform-worker.js');
else require('./transform-worker.ts');
