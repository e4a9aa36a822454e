import { expect } from 'chai';
import { ConfigError, type ConfigProblem } from '../../../src/config/errors.js';
import { configFromObject } from '../../../src/config/load.js';
import { configSchema, PROVIDERS, SECRET_KEYS } from '../../../src/config/schema.js';
import type { SchemaNode } from '../../../src/schema-node.js';
import { configReference } from '../../../scripts/docs/render.js';

const SECRET = 'Sup3rSecretValue';

/** Every schema property marked `secret`, as a path of keys. */
function secretPaths(node: SchemaNode, at: string[] = []): string[][] {
  return Object.entries(node.properties ?? {}).flatMap(([k, v]) => [
    ...(v.secret ? [[...at, k]] : []),
    ...secretPaths(v, [...at, k]),
    ...(v.items ? secretPaths(v.items, [...at, k, '[]']) : []),
    // A list of plain values or maps (hooks.tokens): the map's keys.
    ...(v.items?.anyOf ?? []).flatMap((branch) => secretPaths(branch, [...at, k, '[]'])),
  ]);
}

function problemsFor(raw: unknown, env: Record<string, string> = {}): ConfigProblem[] {
  try {
    configFromObject(raw, '/etc/hookrelay/hookrelay.yaml', env);
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  throw new Error('expected a ConfigError');
}

/**
 * `{a:{b:{c: value}}}` for the path a.b.c (`[]` a list of one item); providers that need one
 * get their required URL, a mapping what it needs besides the secret.
 */
function configWith(path: string[], value: unknown): Record<string, unknown> {
  const root: Record<string, any> = {};
  let here = root;
  path.slice(0, -1).forEach((k, i) => {
    if (k === '[]') return;
    here = here[k] ??= path[i + 1] === '[]' ? [{}] : {};
    if (Array.isArray(here)) here = here[0];
  });
  here[path.at(-1)!] = value;
  if (path[0] === 'providers') Object.assign(here, { signal: {}, imessage: { apiBase: 'http://bb' }, msteams: { serviceUrl: 'http://teams' } }[path[1]!] ?? {});
  // verify.verifyToken belongs to scheme meta, beside its secret; verify.password to postmark, beside its username.
  const meta = path.at(-1) === 'verifyToken' ? { scheme: 'meta', secret: 's' } : path.at(-1) === 'password' ? { scheme: 'postmark', username: 'u' } : {};
  if (path[1] === 'mappings') Object.assign(root.hooks.mappings[0], { match: { path: 'x' }, messageTemplate: 'm' }, { verify: { scheme: 'github', ...meta, ...root.hooks.mappings[0].verify } });
  return root;
}

/** The YAML path of a key path: `hooks.mappings[0].verify.secret`. */
const yaml = (path: string[]) => path.join('.').replaceAll('.[]', '[0]');

describe('config: secrets are marked once, in the schema', () => {
  it('SECRET_KEYS is derived from the schema: the hooks token, the API key and every provider credential', () => {
    expect([...SECRET_KEYS].sort()).to.deep.equal(['accessToken', 'adminToken', 'adminTokens', 'apiKey', 'appPassword', 'botToken', 'callbackSecret', 'password', 'secret', 'secrets', 'token', 'tokens', 'verifyToken']);
    const marked = secretPaths(configSchema).map((p) => p.join('.'));
    expect(marked).to.include.members([
      'server.adminToken',
      'server.adminTokens',
      'hooks.token',
      'hooks.tokens',
      'hooks.tokens.[].token',
      'hooks.mappings.[].verify.secret',
      'hooks.mappings.[].verify.secrets',
      'hooks.mappings.[].verify.password',
      'hooks.mappings.[].verify.verifyToken',
      'agent.apiKey',
      'providers.whatsapp.accessToken',
      'providers.telegram.botToken',
      'providers.imessage.password',
      'providers.discord.botToken',
      'providers.slack.botToken',
      'providers.msteams.appPassword',
    ]);
    // Every key the walk found is one the schema marks, and nothing else.
    expect(new Set(secretPaths(configSchema).map((p) => p.at(-1)))).to.deep.equal(new Set(SECRET_KEYS));
  });

  it('every provider with a credential has it marked (a new provider is caught here)', () => {
    const providers = configSchema.properties!.providers!.properties!;
    expect(Object.keys(providers)).to.have.members([...PROVIDERS]);
    const credential = /(token|password|secret|key)$/i; // not tokenUrl
    for (const [name, node] of Object.entries(providers)) {
      for (const [key, field] of Object.entries(node.properties ?? {})) {
        if (credential.test(key)) expect(field.secret, `providers.${name}.${key}`).to.equal(true);
      }
    }
  });

  it('a config error about a bad secret value never echoes it, for every secret key', () => {
    const paths = secretPaths(configSchema);
    expect(paths).to.have.length.above(7);
    for (const path of paths) {
      // A list of secrets takes a list: a text or a map is what is wrong there.
      const list = path.at(-1)!.endsWith('s');
      for (const bad of list ? [SECRET, { value: SECRET }] : [[SECRET], { value: SECRET }, [{ nested: SECRET }]]) {
        const problems = problemsFor(configWith(path, bad));
        expect(problems.map((p) => p.path), yaml(path)).to.deep.equal([yaml(path)]);
        expect(JSON.stringify(problems), yaml(path)).not.to.include(SECRET);
      }
    }
  });

  it('a secret from the environment is not echoed by any problem either', () => {
    const problems = problemsFor({ hooks: { token: '${TOK}', defaultSessionKey: 'hook:\u001b${TOK}' }, agent: { apiKey: ['${TOK}'] } }, { TOK: SECRET });
    expect(problems.map((p) => p.path)).to.have.members(['hooks.defaultSessionKey', 'agent.apiKey']);
    expect(JSON.stringify(problems)).not.to.include(SECRET);
  });

  it('the generated reference says "Secret" on each marked key, and only there', () => {
    const rows = configReference().split('\n').filter((l) => l.startsWith('| `'));
    const secretRows = rows.filter((l) => l.includes('Secret: never logged.')).map((l) => /^\| `([^`]+)`/.exec(l)![1]);
    expect(secretRows).to.include.members(['hooks.token', 'agent.apiKey', 'providers.whatsapp.accessToken', 'providers.msteams.appPassword']);
    expect(secretRows).to.have.members(secretPaths(configSchema).map((p) => p.join('.').replaceAll('.[]', '[]')));
  });
});
