import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ConfigError, type ConfigProblem } from './errors.js';
import type { MappingValidator } from './presets.js';
import { ajvProblems, dedupe } from './problems.js';
import { isPlainObject, NOT_A_MAP, prepare, readConfigFile, type Env, type Obj } from './read.js';
import { channelConflicts, checkMapping, checkRules, urlProblems } from './rules.js';
import { configSchema } from './schema.js';
import { compileShape, createShapeAjv, prebuiltChecker, SHAPE_CHECKER } from './shape.js';
import type { Config, LoadedConfig, MappingConfig } from './types.js';

const validateShape = prebuiltChecker(SHAPE_CHECKER, () => compileShape(createShapeAjv()));

/** The config file and why that one (CONTRACT.md §2); `fallback` (the example config of `npm start`) only when none was given and `./hookrelay.yaml` does not exist. */
export function configSource(flag?: string, env: Env = process.env, fallback?: string): { file: string; from: string } {
  if (flag) return { file: flag, from: '--config' };
  if (env.HOOKRELAY_CONFIG) return { file: env.HOOKRELAY_CONFIG, from: '$HOOKRELAY_CONFIG' };
  if (fallback && !existsSync('./hookrelay.yaml')) {
    return { file: fallback, from: 'the fallback: no --config, no $HOOKRELAY_CONFIG and no ./hookrelay.yaml' };
  }
  return { file: './hookrelay.yaml', from: 'the default: no --config and no $HOOKRELAY_CONFIG' };
}

/** The YAML paths a command reads: an unset `${VAR}` elsewhere expands to nothing, its key's rule waived. Absent: every path. */
export type Reads = (path: string) => boolean;

/** `.json` as JSON, anything else as YAML. @throws ConfigError listing every problem with its YAML path. */
export function loadConfig(file: string, env: Env = process.env, reads?: Reads): LoadedConfig {
  return configFromObject(readConfigFile(file), file, env, reads);
}

/** The parsed file with the overrides laid over it before validation, so `--host 0.0.0.0` is checked like the file's own value (a non-loopback host needs a token). */
export function readConfig(file: string, { host, port }: { host?: string; port?: number } = {}): Obj {
  const raw = readConfigFile(file);
  if (host === undefined && port === undefined) return raw;
  const server = isPlainObject(raw.server) ? { ...raw.server } : {};
  if (host !== undefined) server.host = host;
  if (port !== undefined) server.port = port;
  return { ...raw, server };
}

/** `file` only locates relative paths. @throws ConfigError listing every problem with its YAML path. */
export function configFromObject(raw: unknown, file: string, env: Env = process.env, reads?: Reads): LoadedConfig {
  const { problems, loaded } = inspectConfig(raw, file, env, reads);
  if (!loaded) throw new ConfigError(problems);
  return loaded;
}

/**
 * Collects every problem instead of stopping at the first stage; the document itself is not changed (a reload keeps it).
 * `draft`: the config as far as it could be read, so the parts whose shape is right can still be compiled and report in the same pass.
 */
export function inspectConfig(raw: unknown, file: string, env: Env = process.env, reads?: Reads): { problems: ConfigProblem[]; loaded?: LoadedConfig; draft: Obj } {
  const abs = resolve(file);
  const baseDir = dirname(abs);
  if (raw !== null && raw !== undefined && !isPlainObject(raw)) {
    return { problems: [{ path: file, message: NOT_A_MAP }], draft: {} };
  }
  const unset: ConfigProblem[] = [];
  const data = prepare(raw ?? {}, env, '', unset) as Obj;
  const needed = reads ? unset.filter((p) => reads(p.path)) : unset;
  const problems = [...needed, ...channelConflicts(data.hooks?.mappings, 'hooks.mappings')];
  if (!validateShape(data)) problems.push(...ajvProblems(validateShape.errors, ''));
  const cfg = data as Config;
  checkRules(cfg, problems, validateMappings);
  urlProblems(configSchema, cfg, raw, '', problems);
  if (typeof cfg.dataDir === 'string') cfg.dataDir = resolve(baseDir, cfg.dataDir);
  if (isPlainObject(cfg.hooks) && typeof cfg.hooks.transformsDir === 'string') cfg.hooks.transformsDir = resolve(baseDir, cfg.hooks.transformsDir);
  // An unset `${VAR}` also fails its key's own rule: only the unset variable, the one to fix, is kept.
  const unsetAt = new Set(unset.map((p) => p.path));
  const shown = dedupe(problems.filter((p) => needed.includes(p) || !unsetAt.has(p.path)));
  if (shown.length) return { problems: shown, draft: data };
  return { problems: shown, draft: data, loaded: deepFreeze({ file: abs, baseDir, config: cfg }) };
}

export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

const validateMappings: MappingValidator = (raw, path, idPrefix) => {
  const list = prepare(raw, null); // shipped files: no ${VAR}
  const problems = channelConflicts(list, path);
  // The config's own checker, on a config of these mappings alone.
  if (!validateShape({ hooks: { mappings: list } })) {
    problems.push(...ajvProblems(validateShape.errors!.map((e) => ({ ...e, instancePath: e.instancePath.slice('/hooks/mappings'.length) })), path));
  }
  if (!Array.isArray(list)) return { problems, mappings: [] };
  list.forEach((m, i) => isPlainObject(m) && checkMapping(m, `${path}[${i}]`, `${idPrefix}${i + 1}`, problems));
  return { problems, mappings: list as MappingConfig[] };
};
