import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Ajv, ValidateFunction } from 'ajv';
import { ConfigError, type ConfigProblem } from './errors.js';
import type { MappingValidator } from './presets.js';
import { ajvProblems, dedupe } from './problems.js';
import { isPlainObject, NOT_A_MAP, prepare, readConfigFile, type Env, type Obj } from './read.js';
import { channelConflicts, checkMapping, checkRules, urlProblems } from './rules.js';
import { configSchema } from './schema.js';
import { createShapeAjv, mappingListChecker, shapeChecker } from './shape.js';
import type { Config, LoadedConfig, MappingConfig } from './types.js';

/**
 * Loading a config, in the order of its jobs: read the file and expand `${VAR}` (read.ts),
 * check the shape and fill the defaults (ajv, against schema.ts), check the hand-written rules
 * (rules.ts), word every problem with its YAML path (problems.ts), then freeze. Every problem
 * of every stage is collected, so one run lists them all.
 */

// Compiled once at module load (STYLE.md §2), or by the build (shape.ts).
let ajv: Ajv | undefined;
const shapeAjv = () => (ajv ??= createShapeAjv());
const validateShape = shapeChecker(shapeAjv);
// Only preset files need it: loaded (or, from the sources, compiled) on first use.
let validateMappingList: ValidateFunction | undefined;

/**
 * The config file to use (CONTRACT.md §2): `--config`, else `$HOOKRELAY_CONFIG`, else
 * `./hookrelay.yaml`. `fallback` (what `npm start` passes: the example config) is used only
 * when none of those was given and `./hookrelay.yaml` does not exist, so a user's own file
 * always wins over the example.
 */
export function resolveConfigPath(flag?: string, env: Env = process.env, fallback?: string): string {
  return configSource(flag, env, fallback).file;
}

/**
 * {@link resolveConfigPath}, and why that file: `serve` says it at start, since `npm start`
 * may pick any of four files.
 */
export function configSource(flag?: string, env: Env = process.env, fallback?: string): { file: string; from: string } {
  if (flag) return { file: flag, from: '--config' };
  if (env.HOOKRELAY_CONFIG) return { file: env.HOOKRELAY_CONFIG, from: '$HOOKRELAY_CONFIG' };
  if (fallback && !existsSync('./hookrelay.yaml')) {
    return { file: fallback, from: 'the fallback: no --config, no $HOOKRELAY_CONFIG and no ./hookrelay.yaml' };
  }
  return { file: './hookrelay.yaml', from: 'the default: no --config and no $HOOKRELAY_CONFIG' };
}

/**
 * The config of the commands that only read or copy the store (`events`, `runs`, `requests`, `store copy`):
 * `dataDir` and `store` from the file, everything else at its defaults. They need nothing else,
 * so an unset `${VAR}` elsewhere (a webhook secret, the model's key) does not stop them.
 * @throws ConfigError when the file cannot be read, or dataDir or store has a problem.
 */
export function loadStoreConfig(file: string, env: Env = process.env): LoadedConfig {
  const { dataDir, store } = readConfigFile(file);
  return configFromObject({ dataDir, store }, file, env);
}

/**
 * Which YAML paths a command reads (`pause` the store and the mapping ids, `fixture` the
 * mappings): an unset `${VAR}` at any other path is no problem for it — it expands to nothing,
 * and that key's own rule is waived — since a webhook secret or the model's key it never uses
 * should not stop it. Without one, every path is read (`check`, `serve`).
 */
export type Reads = (path: string) => boolean;

/** Command-line settings that take precedence over the file's (`serve --host/--port`). */
export interface ConfigOverrides {
  host?: string;
  port?: number;
}

/**
 * Reads, expands, validates and freezes a config file (`.json` as JSON, anything else as YAML).
 * @throws ConfigError listing every problem found, each with its YAML path.
 */
export function loadConfig(file: string, env: Env = process.env, overrides: ConfigOverrides = {}, reads?: Reads): LoadedConfig {
  return configFromObject(readConfig(file, overrides), file, env, reads);
}

/**
 * The parsed config file with the command-line overrides applied, before `${VAR}` expansion
 * and validation: what a reload starts from (and what it takes the restart-only keys from).
 * @throws ConfigError when the file cannot be read or parsed.
 */
export function readConfig(file: string, overrides: ConfigOverrides = {}): unknown {
  return withOverrides(readConfigFile(file), overrides);
}

/**
 * The overrides applied to the parsed file, before validation: `--port 0` or `--host 0.0.0.0`
 * are checked like the file's own values (a non-loopback host still needs a token).
 */
function withOverrides(raw: unknown, { host, port }: ConfigOverrides): unknown {
  if (host === undefined && port === undefined) return raw;
  if (raw !== null && raw !== undefined && !isPlainObject(raw)) return raw; // reported by configFromObject
  const doc = { ...(raw as Obj | undefined) };
  const server = isPlainObject(doc.server) ? { ...doc.server } : {};
  if (host !== undefined) server.host = host;
  if (port !== undefined) server.port = port;
  doc.server = server;
  return doc;
}

/**
 * Builds a {@link LoadedConfig} from an already parsed document, as {@link loadConfig} does
 * after parsing; `file` only locates relative paths (`dataDir`, `hooks.transformsDir`…).
 * @throws ConfigError listing every problem found, each with its YAML path.
 */
export function configFromObject(raw: unknown, file: string, env: Env = process.env, reads?: Reads): LoadedConfig {
  const { problems, loaded } = inspectConfig(raw, file, env, reads);
  if (!loaded) throw new ConfigError(problems);
  return loaded;
}

/** What {@link inspectConfig} found. */
export interface Inspected {
  /** Every problem of shape and static rules, each with its YAML path. */
  problems: ConfigProblem[];
  /** The frozen config, when there are no problems. */
  loaded?: LoadedConfig;
  /**
   * The config as far as it could be read (defaults applied, mappings normalised, presets
   * appended, paths resolved) even when it has problems, so that the parts whose own shape
   * is right can still be compiled and their problems reported in the same pass.
   */
  draft: Obj;
}

/**
 * Validates a parsed document and collects every problem instead of stopping at the first
 * stage that has one. The document itself is not changed (a reload keeps it).
 */
export function inspectConfig(raw: unknown, file: string, env: Env = process.env, reads?: Reads): Inspected {
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
  const shown = dedupe(withoutEchoes(problems, unset, needed));
  if (shown.length) return { problems: shown, draft: data };
  return { problems: shown, draft: data, loaded: deepFreeze({ file: abs, baseDir, config: cfg }) };
}

/**
 * An unset `${VAR}` expands to nothing, so its key then also fails its own rule ("must not be
 * empty"): one problem reported twice. The unset variable is the one to fix; only it is kept
 * (when the command reads it: `needed`).
 */
function withoutEchoes(problems: ConfigProblem[], unset: ConfigProblem[], needed: ConfigProblem[]): ConfigProblem[] {
  const at = new Set(unset.map((p) => p.path));
  return problems.filter((p) => needed.includes(p) || !at.has(p.path));
}

/** Freezes a value and everything reachable from it; returns it. */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** Validates and normalises a list of mappings (the presets use it too). */
const validateMappings: MappingValidator = (raw, path, idPrefix) => {
  const list = prepare(raw, null); // shipped files: no ${VAR}
  const problems = channelConflicts(list, path);
  validateMappingList ??= mappingListChecker(shapeAjv);
  if (!validateMappingList(list)) problems.push(...ajvProblems(validateMappingList.errors, path));
  if (!Array.isArray(list)) return { problems, mappings: [] };
  list.forEach((m, i) => isPlainObject(m) && checkMapping(m, `${path}[${i}]`, `${idPrefix}${i + 1}`, problems));
  return { problems, mappings: list as MappingConfig[] };
};
