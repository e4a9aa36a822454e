import type { readConfig, Reads } from '../config/load.js';
import { isAtOrBelow } from '../config/errors.js';
import type { LoadedConfig } from '../config/types.js';
import { orExit } from './exit.js';
import type { StoreReader } from '../store/store.js';

/** What `fixture` reads: the store and the mappings, not the hooks tokens nor the e-mail account. */
export const FIXTURE_READS: Reads = (path) => isAtOrBelow(path, 'dataDir') || isAtOrBelow(path, 'store')
  || (isAtOrBelow(path, 'hooks') && !['hooks.token', 'hooks.tokens', 'hooks.email'].some((key) => isAtOrBelow(path, key)));

/** What `pause` and `resume` read: the store, and the mapping ids they check the name against. */
export const PAUSE_READS: Reads = (path) => isAtOrBelow(path, 'dataDir') || isAtOrBelow(path, 'store') || /^hooks\.mappings\[\d+\]\.id$/.test(path);

/** Reads, validates and compiles the config in one pass (compile-config.ts), with `serve`'s overrides and fallback file; every problem: exit 1. */
export async function compile(flag: string | undefined, { overrides, fallback, reads }: { overrides?: Parameters<typeof readConfig>[1]; fallback?: string; reads?: Reads } = {}) {
  const [{ readConfig, configSource }, { compileConfig }] = await Promise.all([import('../config/load.js'), import('../compile-config.js')]);
  const { file, from } = configSource(flag, process.env, fallback);
  return { ...(await orExit(() => compileConfig(readConfig(file, overrides), file, process.env, {}, reads))), from };
}

/** Reads and validates the config without compiling its mappings (the commands that do not map); a problem: exit 1. */
export async function load(flag: string | undefined, reads?: Reads): Promise<LoadedConfig> {
  const { loadConfig, configSource } = await import('../config/load.js');
  return orExit(() => loadConfig(configSource(flag).file, process.env, reads));
}

/** The config of the commands that only read or copy the store: dataDir and store alone, so an unset `${VAR}` elsewhere does not stop them; a problem: exit 1. */
export async function loadStore(flag: string | undefined): Promise<LoadedConfig> {
  const [{ configFromObject, configSource }, { readConfigFile }] = await Promise.all([import('../config/load.js'), import('../config/read.js')]);
  const file = configSource(flag).file;
  return orExit(() => {
    const { dataDir, store } = readConfigFile(file);
    return configFromObject({ dataDir, store }, file, process.env);
  });
}

/** Runs `use` on the store opened read-only, which works beside a running server, and closes it. */
export async function withStoreReader<T>(flag: string | undefined, use: (store: StoreReader) => Promise<T>): Promise<T> {
  const loaded = await loadStore(flag);
  const { openStoreReadOnly } = await import('../store/open.js');
  const store = await orExit(() => openStoreReadOnly(loaded.config));
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}
