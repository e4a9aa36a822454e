import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseDocument } from 'yaml';
import type { ConfigProblem } from './errors.js';
import type { MappingConfig } from './types.js';

/**
 * Presets are mapping lists shipped in the package's `presets/` folder (one YAML file per
 * preset, named after it), enabled with `hooks.presets`. Their mappings are appended after
 * the user's, so a user mapping for the same path comes first and wins (CONTRACT.md §3, §7).
 */
const PRESETS_DIR = fileURLToPath(new URL('../../presets/', import.meta.url));

/**
 * Other names of a preset. `gmail` is OpenClaw's name for the e-mail hook (CONTRACT.md §7).
 * Decision: enabling either name loads the same file, `email.yaml`, which serves BOTH
 * `POST {path}/email` and `POST {path}/gmail` (its second mapping is a YAML merge of the
 * first). So a sender configured for either URL works whichever name the user enabled, and
 * enabling both is the same as enabling one.
 */
export const PRESET_ALIASES: Readonly<Record<string, string>> = Object.freeze({ gmail: 'email' });

/**
 * Validates and normalises a raw list of mappings; problems are reported under `path`
 * (e.g. `presets.email[0].messageTemplate`), and mappings without an id get `${idPrefix}<n>`.
 * `load.ts` supplies it, so presets and `hooks.mappings` share one schema and one set of checks.
 */
export type MappingValidator = (raw: unknown, path: string, idPrefix: string) => { problems: ConfigProblem[]; mappings: MappingConfig[] };

/** Every name `hooks.presets` accepts, sorted: the preset files plus their aliases. */
export function knownPresets(): string[] {
  const files = readdirSync(PRESETS_DIR).filter((f) => f.endsWith('.yaml')).map((f) => f.slice(0, -'.yaml'.length));
  return [...new Set([...files, ...Object.keys(PRESET_ALIASES)])].sort();
}

/**
 * Loads the named presets in order (aliases resolved, each preset once). Unknown names are
 * problems at `hooks.presets[i]` that list the known names.
 */
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
    const path = `presets.${canonical}`;
    const doc = parseDocument(readFileSync(`${PRESETS_DIR}${canonical}.yaml`, 'utf8'), { merge: true, prettyErrors: true });
    if (doc.errors.length) {
      problems.push(...doc.errors.map((e) => ({ path, message: `invalid YAML in presets/${canonical}.yaml: ${e.message.split('\n')[0]}` })));
      return;
    }
    const result = validate(doc.toJS(), path, `${canonical}-`);
    problems.push(...result.problems);
    mappings.push(...result.mappings);
  });
  return { problems, mappings };
}
