import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import type { ConfigProblem } from './errors.js';
import { isPlainObject, type Obj } from './read.js';
import type { MappingConfig } from './types.js';

const PRESETS_DIR = fileURLToPath(new URL('../../presets/', import.meta.url));

/** `gmail` is OpenClaw's name for the e-mail hook (CONTRACT.md §7): either name loads `email.yaml`. */
export const PRESET_ALIASES: Readonly<Record<string, string>> = Object.freeze({ gmail: 'email' });

/**
 * Presets whose sender may sign or not: Grafana signs only when its contact point has an HMAC secret
 * (https://grafana.com/docs/grafana/latest/alerting/configure-notifications/manage-contact-points/integrations/webhook-notifier/#hmac-signature);
 * without one here its mappings drop `verify` and take the hooks token, which Grafana sends as its Authorization header.
 */
const SIGNING_OPTIONAL: ReadonlySet<string> = new Set(['grafana']);

/** Supplied by `load.ts`, so presets and `hooks.mappings` share one schema and one set of checks. */
export type MappingValidator = (raw: unknown, path: string, idPrefix: string) => { problems: ConfigProblem[]; mappings: MappingConfig[] };

export function knownPresets(): string[] {
  const files = readdirSync(PRESETS_DIR).filter((f) => f.endsWith('.yaml')).map((f) => f.slice(0, -'.yaml'.length));
  return [...new Set([...files, ...Object.keys(PRESET_ALIASES)])].sort();
}

/** A `hooks.presets` entry: `NAME`, or `{NAME: {secret | secrets}}` (one name per entry, checked by entryOf). */
type Entry = string | Record<string, { secret?: string; secrets?: string[] }>;

/** Aliases resolved, each preset once; a preset whose sender signs gets the entry's secret in its mappings' `verify`. */
export function loadPresets(entries: readonly unknown[], validate: MappingValidator): { problems: ConfigProblem[]; mappings: MappingConfig[] } {
  const known = knownPresets();
  const problems: ConfigProblem[] = [];
  const mappings: MappingConfig[] = [];
  const loaded = new Set<string>();
  entries.forEach((entry, i) => {
    const at = `hooks.presets[${i}]`;
    const named = entryOf(entry as Entry);
    if (named === undefined) return; // the schema reported its shape
    if (typeof named === 'string') {
      problems.push({ path: at, message: named });
      return;
    }
    const { name, settings } = named;
    if (!known.includes(name)) {
      problems.push({ path: at, message: `unknown preset "${name}"; known presets: ${known.join(', ')}` });
      return;
    }
    const canonical = PRESET_ALIASES[name] ?? name;
    if (loaded.has(canonical)) {
      if (settings) problems.push({ path: at, message: `preset ${canonical} is enabled twice: keep one entry, with its secret` });
      return;
    }
    loaded.add(canonical);
    // A shipped file: YAML that does not parse is a broken install, not a config problem.
    const raw = parse(readFileSync(`${PRESETS_DIR}${canonical}.yaml`, 'utf8'), { merge: true }) as unknown[];
    const problem = secretProblem(canonical, raw, settings, `${at}.${name}`);
    if (problem) {
      problems.push(problem);
      return;
    }
    const result = validate(raw, `presets.${canonical}`, `${canonical}-`);
    problems.push(...result.problems);
    mappings.push(...result.mappings);
  });
  return { problems, mappings };
}

/** The entry's preset and settings; a string says what is wrong with it; undefined when the schema already said. */
function entryOf(entry: Entry): { name: string; settings?: Obj } | string | undefined {
  if (typeof entry === 'string') return { name: entry };
  if (!isPlainObject(entry)) return undefined;
  const names = Object.keys(entry);
  if (names.length !== 1) return `names ${names.length === 0 ? 'no preset' : `${names.length} presets (${names.join(', ')})`}: give each preset an entry of its own, e.g. - github: {secret: "\${GITHUB_WEBHOOK_SECRET}"}`;
  return isPlainObject(entry[names[0]!]) ? { name: names[0]!, settings: entry[names[0]!] } : undefined;
}

/**
 * Fills the secret into the `verify` of every mapping that has one, in place; a preset whose sender
 * signs refuses to load without it, since its mappings take the signature in place of the hooks token.
 */
function secretProblem(name: string, raw: unknown[], settings: Obj | undefined, at: string): ConfigProblem | undefined {
  const signed = raw.filter((m): m is Obj => isPlainObject(m) && isPlainObject(m.verify));
  const secret = settings?.secret;
  const secrets = settings?.secrets;
  if (secret !== undefined && secrets !== undefined) return { path: `${at}.secrets`, message: 'give secret or secrets (a list, for rotation), not both' };
  const given = secret !== undefined || secrets !== undefined;
  if (signed.length === 0) {
    return given ? { path: `${at}.secret`, message: `the ${name} preset checks no signature (its sender sends the hooks token): remove the secret` } : undefined;
  }
  if (!given && SIGNING_OPTIONAL.has(name)) {
    for (const m of signed) {
      delete m.verify;
      delete m.auth;
    }
    return undefined;
  }
  if (!given) {
    const scheme = String(signed[0]!.verify.scheme);
    const variable = `${name.toUpperCase()}_WEBHOOK_SECRET`;
    return { path: at.slice(0, at.lastIndexOf('.')), message: `the ${name} preset checks the sender's ${scheme} signature and needs its signing secret (docs/presets.md says where the sender shows it): write the entry as {${name}: {secret: "\${${variable}}"}}` };
  }
  for (const m of signed) Object.assign(m.verify, secret !== undefined ? { secret } : { secrets });
  return undefined;
}
