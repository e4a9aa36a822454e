// Entry of a transform worker process (transform-pool.ts forks it). It installs tsx's CommonJS
// hook only for TypeScript transforms, or for transform-worker.ts itself when run from src/.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const built = existsSync(new URL('./transform-worker.js', import.meta.url));
const { specs } = JSON.parse(process.argv[2]);
const tsx = !built || specs.some((s) => /\.[cm]?ts$/i.test(s.file));
if (tsx) {
  // Without esbuild's worker thread its binary does not stay running beside each worker for
  // the few compiles a load makes (https://esbuild.github.io/api/#js-details).
  const threads = process.env.ESBUILD_WORKER_THREADS;
  process.env.ESBUILD_WORKER_THREADS = '0';
  require('tsx/cjs/api').register();
  if (threads === undefined) delete process.env.ESBUILD_WORKER_THREADS;
  else process.env.ESBUILD_WORKER_THREADS = threads;
}
if (built) await import('./transform-worker.js');
else require('./transform-worker.ts');
