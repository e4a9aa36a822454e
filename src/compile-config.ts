import { ConfigError } from './config/errors.js';
import { inspectConfig, type Reads } from './config/load.js';
import type { LoadedConfig } from './config/types.js';
import { compileProblems, createEngine, type Engine, type EngineOptions } from './engine/engine.js';

/** Loader and engine in one pass, so a typo'd key does not hide a broken template (CONTRACT.md §2); throws ConfigError. */
export async function compileConfig(raw: unknown, file: string, env: Record<string, string | undefined>, opts: EngineOptions = {}, reads?: Reads): Promise<{ loaded: LoadedConfig; engine: Engine }> {
  const { problems, loaded, draft } = inspectConfig(raw, file, env, reads);
  if (loaded) return { loaded, engine: await createEngine(loaded.config, opts) };
  throw new ConfigError([...problems, ...(await compileProblems(draft, problems, opts))]);
}
