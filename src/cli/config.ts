import type { ConfigOverrides } from '../config/load.js';
import type { LoadedConfig } from '../config/types.js';
import { orExit, orExitAsync } from './exit.js';
import { compileModule, configLoader } from './modules.js';

// The config file: `--config`, else $HOOKRELAY_CONFIG, else ./hookrelay.yaml (CONTRACT.md §2).

/** Reads, validates and compiles the config in one pass (compile-config.ts); every problem: exit 1. */
export async function compile(flag: string | undefined, overrides?: ConfigOverrides, fallback?: string) {
  const [{ readConfig, configSource }, { compileConfig }] = await Promise.all([configLoader(), compileModule()]);
  const { file, from } = configSource(flag, process.env, fallback);
  return { ...(await orExitAsync(() => compileConfig(readConfig(file, overrides), file, process.env))), from };
}

/** Reads and validates the config without compiling its mappings (the commands that do not map); a problem: exit 1. */
export async function load(flag: string | undefined): Promise<LoadedConfig> {
  const { loadConfig, resolveConfigPath } = await configLoader();
  return orExit(() => loadConfig(resolveConfigPath(flag, process.env), process.env));
}

/** The config of the commands that only read or copy the store: dataDir and store alone (load.ts loadStoreConfig); a problem: exit 1. */
export async function loadStore(flag: string | undefined): Promise<LoadedConfig> {
  const { loadStoreConfig, resolveConfigPath } = await configLoader();
  return orExit(() => loadStoreConfig(resolveConfigPath(flag, process.env), process.env));
}
