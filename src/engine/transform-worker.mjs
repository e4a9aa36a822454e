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
const tsx = !built || specs.some((s) => /\.[cm]?ts$/i.test(s.file));
if (tsx) {
  // tsx compiles through esbuild's synchronous API, which by default keeps a thread (a V8
  // isolate of its own) and the esbuild binary running after a compile, for the next one:
  // ~11 MiB of the worker's memory and an ~11 MiB process beside it for as long as the
  // worker lives. Without the thread (esbuild reads this when tsx loads it) each compile runs
  // the binary once and waits for it; compiles are few (at load, and tsx caches them on disk).
  const threads = process.env.ESBUILD_WORKER_THREADS;
  process.env.ESBUILD_WORKER_THREADS = '0';
  require('tsx/cjs/api').register();
  if (threads === undefined) delete process.env.ESBUILD_WORKER_THREADS;
  else process.env.ESBUILD_WORKER_THREADS = threads;
}
if (built) await import('./transform-worker.js');
else require('./transform-worker.ts');
