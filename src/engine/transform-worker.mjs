// Entry of a transform worker process (transform-workers.ts forks the built one, dist/engine/).
// It installs tsx's CommonJS hook only for TypeScript transforms.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { specs } = JSON.parse(process.argv[2]);
if (specs.some((s) => /\.[cm]?ts$/i.test(s.file))) {
  // Without esbuild's worker thread its binary does not stay running beside each worker for
  // the few compiles a load makes (https://esbuild.github.io/api/#js-details).
  const threads = process.env.ESBUILD_WORKER_THREADS;
  process.env.ESBUILD_WORKER_THREADS = '0';
  require('tsx/cjs/api').register();
  if (threads === undefined) delete process.env.ESBUILD_WORKER_THREADS;
  else process.env.ESBUILD_WORKER_THREADS = threads;
}
await import('./transform-worker.js');
