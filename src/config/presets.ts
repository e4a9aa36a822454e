import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import type { ConfigProblem } from './errors.js';
import type { MappingConfig } from './types.js';

const PRESETS_DIR = fileURLToPath(new URL('../../presets/', import.meta.url));

/** `gmail` is OpenClaw's name for the e-mail hook (CONTRACT.md §7): either name loads `email.yaml`. */
export const PRESET_ALIASES: Readonly<Record<string, string>> = Object.freeze({ gmail: 'email' });

/** Supplied by `load.ts`, so presets and `hooks.mappings` share one schema and one set of checks. */
export type MappingValidator = (raw: unknown, path: string, idPrefix: string) => { problems: ConfigProblem[]; mappings: MappingConfig[] };

export function knownPresets(): string[] {
  const files = readdirSync(PRESETS_DIR).filter((f) => f.endsWith('.yaml')).map((f) => f.slice(0, -'.yaml'.length));
  return [...new Set([...files, ...Object.keys(PRESET_ALIASES)])].sort();
}

/** Aliases resolved, each preset once. */
export function loadPresets(names: readonly string[], validate: MappingValidator): { problems: ConfigProblem[]; mappings: MappingConfig[] } {
  const known = knownPresets();
  const problems: ConfigProblem[] = [];
  const mappings: MappingConfig[] = [];
  const loaded = new Set<string>();
  names.forEach((name, i) => {
    if (!known.includes(name)) {
      problems.push({ path: `hooks.presets[${i}]`, message: `unknown preset "${name}"; known presets: ${known.join(', ')}` });
      return;
    }
    const canonical = PRESET_ALIASES[name] ?? name;
    if (loaded.has(canonical)) return;
    loaded.add(canonical);
    // A shipped file: YAML that does not parse is a broken install, not a config problem.
    const raw = parse(readFileSync(`${PRESETS_DIR}${canonical}.yaml`, 'utf8'), { merge: true });
    const result = validate(raw, `presets.${canonical}`, `${canonical}-`);
    problems.push(...result.problems);
    mappings.push(...result.mappings);
  });
  return { problems, mappings };
}
