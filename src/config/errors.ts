/** One problem with the configuration, located by its YAML path (`hooks.mappings[2].transform.module`). */
export interface ConfigProblem {
  path: string;
  message: string;
}

/** Whether the YAML path `path` is `key` or lies below it (`hooks.mappings[0].id` is below `hooks.mappings`). */
export function isAtOrBelow(path: string, key: string): boolean {
  return path === key || path.startsWith(`${key}.`) || path.startsWith(`${key}[`);
}

/** The server never starts half-valid: every problem found is listed, each with its path. */
export class ConfigError extends Error {
  constructor(readonly problems: ConfigProblem[]) {
    super(problems.map((p) => `${p.path}: ${p.message}`).join('\n'));
    this.name = 'ConfigError';
  }
}
