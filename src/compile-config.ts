import { ConfigError } from './config/errors.js';
import { inspectConfig, type Reads } from './config/load.js';
import type { LoadedConfig } from './config/types.js';
import { compileProblems, createEngine, type Engine, type EngineOptions } from './engine/engine.js';

/**
 * Validates and compiles a parsed config in one pass — shape and static rules (the loader),
 * then templates, JSONata, payload schemas and transform modules (the engine) — so that
 * `hookrelay check`, `serve` and a reload list every problem at once (CONTRACT.md §2): a
 * typo'd key does not hide a broken template until it is fixed. `reads`: the paths a command
 * reads, when not all of them (load.ts {@link Reads}).
 * @throws ConfigError with every problem, each with its YAML path.
 */
export async function compileConfig(raw: unknown, file: string, env: Record<string, string | undefined>, opts: EngineOptions = {}, reads?: Reads): Promise<{ loaded: LoadedConfig; engine: Engine }> {
  const { problems, loaded, draft } = inspectConfig(raw, file, env, reads);
  if (loaded) return { loaded, engine: await createEngine(loaded.config, opts) };
  throw new ConfigError([...problems, ...(await compileProblems(draft, problems, opts))]);
}
