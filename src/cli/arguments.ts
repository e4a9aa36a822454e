import { InvalidArgumentError, Option } from 'commander';
import { fail } from './exit.js';

/** `-c, --config`: every command that reads the config takes it. */
export const configOption = (): Option => new Option('-c, --config <file>', 'config file (default: $HOOKRELAY_CONFIG, else ./hookrelay.yaml)');

/** A repeatable option's values, in order. */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** `K=V` items of a repeatable option as an object; `key` normalises the names (headers: lower case). */
export function pairs(list: string[], flag: string, key: (k: string) => string = (k) => k): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of list) {
    const i = item.indexOf('=');
    if (i <= 0) fail(`${flag} ${item}: expected K=V`);
    out[key(item.slice(0, i))] = item.slice(i + 1);
  }
  return out;
}

// A bad value throws InvalidArgumentError: commander then names the option (or argument) and
// the value, `option '--after <seq>' argument 'abc' is invalid.`, followed by what is expected.

/** A whole number from `min` to `max`, else `expected`. */
function wholeNumber(min: number, max: number, expected: string): (v: string) => number {
  return (v) => {
    const n = Number(v);
    if (!/^\d+$/.test(v) || n < min || n > max) throw new InvalidArgumentError(expected);
    return n;
  };
}

/** `--limit`: the same rule as the endpoints' `limit` (1 to the maximum; past it is an error, not a clamp). */
export const toLimit = (max: number) => wholeNumber(1, max, `expected a whole number from 1 to ${max}`);

export const toInt = wholeNumber(0, Number.MAX_SAFE_INTEGER, 'expected a whole number, 0 or more');

/** `--port`: commander hands over text; a typo should name the option, not `server.port`. */
export const portNumber = wholeNumber(0, 65535, 'must be a port number, 0–65535');
