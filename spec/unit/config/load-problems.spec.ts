import { expect } from 'chai';
import { ConfigError } from '../../../src/config/errors.js';
import { configFromObject, loadConfig } from '../../../src/config/load.js';
import { yamlPath } from '../../../src/config/problems.js';
import { agentMapping, paths, problemsFor, write } from './load-support.js';

describe('config/load', () => {
  describe('schema problems', () => {
    it('names an unknown key by its YAML path and suggests the closest known one', () => {
      const ps = problemsFor({ hooks: { mappings: [agentMapping, agentMapping, { ...agentMapping, tranform: { module: 'a.ts' } }] } });
      expect(ps).to.deep.equal([{ path: 'hooks.mappings[2].tranform', message: 'unknown key "tranform"; did you mean "transform"?' }]);
    });
    it('lists the allowed keys when no known key is close', () => {
      const [p] = problemsFor({ server: { zzzzzz: 1 } });
      expect(p.path).to.equal('server.zzzzzz');
      expect(p.message).to.equal('unknown key "zzzzzz"; allowed keys: host, port, trustedProxies, publicUrl, publicHosts, headersTimeoutMs, requestTimeoutMs, maxConnections, maxHeaderBytes, maxConnectionsPerAddress, metrics, console, adminToken, adminTokens');
    });
    it('lists the allowed values of an enum and shows the bad one', () => {
      expect(problemsFor({ hooks: { mappings: [{ ...agentMapping, thinking: 'extreme' }] } }))
        .to.deep.equal([{ path: 'hooks.mappings[0].thinking', message: 'must be one of off, minimal, low, medium, high (got "extreme")' }]);
    });
    it('names missing required keys and wrong types', () => {
      const ps = problemsFor({ server: { port: 'eighty' }, hooks: { mappings: [{ ...agentMapping, transform: {} }] } });
      expect(ps).to.deep.include({ path: 'server.port', message: 'must be an integer (got a string)' });
      expect(ps).to.deep.include({ path: 'hooks.mappings[0].transform.module', message: 'is required' });
    });
    it('collects every problem before throwing', () => {
      const ps = problemsFor({ log: { level: 'loud' }, hooks: { path: '/', presets: ['nope'] }, heartbeat: { everySeconds: 0 } });
      expect(paths(ps)).to.have.members(['log.level', 'hooks.path', 'hooks.presets[0]', 'heartbeat.everySeconds']);
    });
  });

  describe('semantic problems', () => {
    const cases: [string, unknown, string][] = [
      ['hooks.path without a leading slash', { hooks: { path: 'hooks' } }, 'hooks.path'],
      ['hooks.path "/"', { hooks: { path: '/' } }, 'hooks.path'],
      ['hooks.path "//" (only slashes)', { hooks: { path: '//' } }, 'hooks.path'],
      ['a request time limit shorter than the headers one', { server: { headersTimeoutMs: 5000, requestTimeoutMs: 2000 } }, 'server.requestTimeoutMs'],
      ['hooks.path with an empty segment (requests are matched normalised)', { hooks: { path: '/api//hooks' } }, 'hooks.path'],
      ['hooks.path with a dot segment', { hooks: { path: '/api/../hooks' } }, 'hooks.path'],
      ['hooks.path with a percent-escape', { hooks: { path: '/h%6Foks' } }, 'hooks.path'],
      ['hooks.path with a backslash', { hooks: { path: '/api\\hooks' } }, 'hooks.path'],
      ['a match.path with an empty segment', { hooks: { mappings: [{ ...agentMapping, match: { path: 'a//b' } }] } }, 'hooks.mappings[0].match.path'],
      ['a match.path with a dot segment', { hooks: { mappings: [{ ...agentMapping, match: { path: 'a/./b' } }] } }, 'hooks.mappings[0].match.path'],
      ['a match.path with a percent-escape', { hooks: { mappings: [{ ...agentMapping, match: { path: 'my%20hook' } }] } }, 'hooks.mappings[0].match.path'],
      ['a duplicate mapping id', { hooks: { mappings: [{ ...agentMapping, id: 'a' }, { ...agentMapping, id: 'a' }] } }, 'hooks.mappings[1].id'],
      ['an explicit id equal to a default one', { hooks: { mappings: [agentMapping, { ...agentMapping, id: 'mapping-1' }] } }, 'hooks.mappings[1].id'],
      ['forEach naming a path', { hooks: { mappings: [{ ...agentMapping, forEach: 'data.items' }] } }, 'hooks.mappings[0].forEach'],
      ['forEach with an index', { hooks: { mappings: [{ ...agentMapping, forEach: 'items[0]' }] } }, 'hooks.mappings[0].forEach'],
      ['forEach __proto__', { hooks: { mappings: [{ ...agentMapping, forEach: '__proto__' }] } }, 'hooks.mappings[0].forEach'],
      ['forEach constructor', { hooks: { mappings: [{ ...agentMapping, forEach: 'constructor' }] } }, 'hooks.mappings[0].forEach'],
      ['an agent mapping without messageTemplate or transform', { hooks: { mappings: [{ match: { path: 'x' }, textTemplate: 't' }] } }, 'hooks.mappings[0].messageTemplate'],
      ['a wake mapping without textTemplate or transform', { hooks: { mappings: [{ action: 'wake', messageTemplate: 'm' }] } }, 'hooks.mappings[0].textTemplate'],
      ['prefixes that do not admit hook:', { hooks: { allowedSessionKeyPrefixes: ['agent:'] } }, 'hooks.allowedSessionKeyPrefixes'],
      ['no prefixes at all', { hooks: { allowedSessionKeyPrefixes: [] } }, 'hooks.allowedSessionKeyPrefixes'],
      ['a defaultSessionKey outside the prefixes', { hooks: { defaultSessionKey: 'main' } }, 'hooks.defaultSessionKey'],
      ['a defaultSessionKey of 201 characters', { hooks: { defaultSessionKey: `hook:${'k'.repeat(196)}` } }, 'hooks.defaultSessionKey'],
      ['a defaultSessionKey holding ESC', { hooks: { defaultSessionKey: 'hook:inbox\u001b[2J' } }, 'hooks.defaultSessionKey'],
      ['a defaultSessionKey holding CR/LF', { hooks: { defaultSessionKey: 'hook:a\r\nb' } }, 'hooks.defaultSessionKey'],
      ['a defaultSessionKey holding NUL', { hooks: { defaultSessionKey: 'hook:a\u0000' } }, 'hooks.defaultSessionKey'],
      ['a defaultSessionKey holding a C1 character', { hooks: { defaultSessionKey: 'hook:a\u0085b' } }, 'hooks.defaultSessionKey'],
      ['an unknown preset', { hooks: { presets: ['email', 'fax'] } }, 'hooks.presets[1]'],
      ['provider and channel both given', { hooks: { mappings: [{ ...agentMapping, provider: 'last', channel: 'last' }] } }, 'hooks.mappings[0].channel'],
      ['a transform module outside transformsDir', { hooks: { mappings: [{ match: { path: 'x' }, transform: { module: '../x.ts' } }] } }, 'hooks.mappings[0].transform.module'],
      ['a transform module given as an absolute path', { hooks: { mappings: [{ match: { path: 'x' }, transform: { module: '/etc/x.ts' } }] } }, 'hooks.mappings[0].transform.module'],
      ['a transform module given as a Windows absolute path', { hooks: { mappings: [{ match: { path: 'x' }, transform: { module: 'C:\\t\\x.ts' } }] } }, 'hooks.mappings[0].transform.module'],
      ['a transform module with a ".." that would land inside', { hooks: { mappings: [{ match: { path: 'x' }, transform: { module: 'sub/../x.ts' } }] } }, 'hooks.mappings[0].transform.module'],
      ['a transform module with a backslash ".."', { hooks: { mappings: [{ match: { path: 'x' }, transform: { module: 'sub\\..\\x.ts' } }] } }, 'hooks.mappings[0].transform.module'],
      ['a transform module without an extension', { hooks: { mappings: [{ match: { path: 'x' }, transform: { module: 'x' } }] } }, 'hooks.mappings[0].transform.module'],
      ['a transform module of another kind', { hooks: { mappings: [{ match: { path: 'x' }, transform: { module: 'x.py' } }] } }, 'hooks.mappings[0].transform.module'],
      ['a timeoutSeconds of 0', { hooks: { mappings: [{ ...agentMapping, timeoutSeconds: 0 }] } }, 'hooks.mappings[0].timeoutSeconds'],
      ['a negative agent.timeoutSeconds', { agent: { timeoutSeconds: -5 } }, 'agent.timeoutSeconds'],
      ['a timeoutSeconds past one day (every request would be refused)', { hooks: { mappings: [{ ...agentMapping, timeoutSeconds: 86401 }] } }, 'hooks.mappings[0].timeoutSeconds'],
      ['a mapping for the built-in /wake', { hooks: { mappings: [{ ...agentMapping, match: { path: 'wake' } }] } }, 'hooks.mappings[0].match.path'],
      ['a mapping for the built-in /events', { hooks: { mappings: [{ ...agentMapping, match: { path: 'events' } }] } }, 'hooks.mappings[0].match.path'],
      ['a mapping for the reserved /runs', { hooks: { mappings: [{ ...agentMapping, match: { path: 'runs' } }] } }, 'hooks.mappings[0].match.path'],
      ['a mapping for the built-in /runs/ID', { hooks: { mappings: [{ ...agentMapping, match: { path: 'runs/x' } }] } }, 'hooks.mappings[0].match.path'],
      ['a sessionKey no prefix admits', { hooks: { mappings: [{ ...agentMapping, sessionKey: 'gh:{{id}}' }] } }, 'hooks.mappings[0].sessionKey'],
      ['an hmac signature check without its header', { hooks: { mappings: [{ ...agentMapping, verify: { scheme: 'hmac', secret: 's' } }] } }, 'hooks.mappings[0].verify.header'],
      ['a mapped IPv4 trusted proxy whose prefix is too long for IPv4', { server: { trustedProxies: ['::ffff:10.0.0.0/104'] } }, 'server.trustedProxies[0]'],
      ['a trusted proxy that is not an address', { server: { trustedProxies: ['10.0.0.0/8', 'proxy.local'] } }, 'server.trustedProxies[1]'],
    ];
    for (const [what, raw, path] of cases) {
      it(`refuses ${what} at ${path}`, () => {
        expect(paths(problemsFor(raw))).to.deep.equal([path]);
      });
    }

    it('accepts other prefixes once defaultSessionKey is set and matches one (case-insensitive)', () => {
      const { config } = configFromObject({ hooks: { allowedSessionKeyPrefixes: ['Agent:'], defaultSessionKey: 'AGENT:main' } }, '/x/c.yaml', {});
      expect(config.hooks.defaultSessionKey).to.equal('AGENT:main');
    });
    it('holds hooks.defaultSessionKey to the request rule (200 characters, no control character), without quoting it', () => {
      expect(configFromObject({ hooks: { defaultSessionKey: `hook:${'k'.repeat(195)}` } }, '/x/c.yaml', {}).config.hooks.defaultSessionKey).to.have.length(200);
      const long = problemsFor({ hooks: { defaultSessionKey: `main:${'k'.repeat(100_000)}` } });
      expect(long).to.deep.equal([{ path: 'hooks.defaultSessionKey', message: 'must be at most 200 characters' }]);
      const [control] = problemsFor({ hooks: { defaultSessionKey: 'main\u001b[31m' } });
      expect(control).to.deep.equal({ path: 'hooks.defaultSessionKey', message: 'must not contain control characters (C0, DEL or C1, e.g. NUL, CR, LF, ESC)' });
    });
    it('lists the known presets when refusing an unknown one', () => {
      expect(problemsFor({ hooks: { presets: ['fax'] } })[0].message).to.equal('unknown preset "fax"; known presets: email, gmail');
    });
    it('says what to change', () => {
      const [p] = problemsFor({ hooks: { mappings: [{ action: 'wake', match: { path: 'ci' } }] } });
      expect(p.message).to.equal('a wake mapping needs textTemplate or transform');
    });
  });

  describe('mapping rules checked at load', () => {
    it('transform.module: one message per rule, saying what to change', () => {
      const module = (m: string) => problemsFor({ hooks: { token: 't', mappings: [{ match: { path: 'x' }, transform: { module: m } }] } })[0].message;
      expect(module('/etc/x.ts')).to.equal('must be a path relative to hooks.transformsDir, not an absolute path');
      expect(module('../x.ts')).to.equal('must not contain ".." segments: move the file into hooks.transformsDir');
      expect(module('x.py')).to.equal('must end in one of .ts, .mts, .js, .mjs, .cjs');
    });

    it('required templates and forEach: one message each', () => {
      expect(problemsFor({ hooks: { token: 't', mappings: [{ match: { path: 'x' } }] } })).to.deep.equal([{ path: 'hooks.mappings[0].messageTemplate', message: 'an agent mapping needs messageTemplate or transform' }]);
      expect(problemsFor({ hooks: { token: 't', mappings: [{ ...agentMapping, forEach: 'a.b' }] } })).to.deep.equal([{ path: 'hooks.mappings[0].forEach', message: 'must be a top-level key of the payload, not a path (got "a.b")' }]);
    });

    it('match.headers: names lower-cased; a name given twice is refused at its path; a credential header is taken (matched on the request as it came)', () => {
      const { config } = configFromObject({ hooks: { token: 't', mappings: [{ ...agentMapping, match: { path: 'gh', headers: { 'X-GitHub-Event': 'push', 'x-n': 7 } } }] } }, '/x/h.yaml', {});
      expect(config.hooks.mappings[0].match.headers).to.deep.equal({ 'x-github-event': 'push', 'x-n': '7' });
      expect(paths(problemsFor({ hooks: { token: 't', mappings: [{ ...agentMapping, match: { headers: { 'X-A': '1', 'x-a': '2', Authorization: 'Bearer t' } } }] } })))
        .to.deep.equal(['hooks.mappings[0].match.headers.x-a']);
      expect(paths(problemsFor({ hooks: { token: 't', mappings: [{ ...agentMapping, match: { headers: { a: ['x'] } } }] } }))).to.deep.equal(['hooks.mappings[0].match.headers.a']);
    });

    it('schema: a map is taken (the engine compiles it); anything else is refused at its path', () => {
      const schema = { type: 'object', required: ['a'] };
      const { config } = configFromObject({ hooks: { token: 't', mappings: [{ ...agentMapping, schema }] } }, '/x/h.yaml', {});
      expect(config.hooks.mappings[0].schema).to.deep.equal(schema);
      expect(paths(problemsFor({ hooks: { token: 't', mappings: [{ ...agentMapping, schema: 'object' }] } }))).to.deep.equal(['hooks.mappings[0].schema']);
    });

    it('deliver: true with an explicit provider needs to (provider last, or a transform, may leave it out)', () => {
      const providers = { telegram: { botToken: 'b' }, slack: { botToken: 'b' } };
      const ps = problemsFor({ providers, hooks: { token: 't', mappings: [{ ...agentMapping, deliver: true, provider: 'telegram' }, { ...agentMapping, deliver: true, channel: 'slack' }] } });
      expect(ps).to.deep.equal([
        { path: 'hooks.mappings[0].to', message: 'is required with deliver: true and provider: telegram (or use provider: last, or a transform that returns to)' },
        { path: 'hooks.mappings[1].to', message: 'is required with deliver: true and provider: slack (or use provider: last, or a transform that returns to)' },
      ]);
      for (const m of [{ deliver: true }, { deliver: true, provider: 'last' }, { deliver: false, provider: 'telegram' }, { deliver: true, provider: 'telegram', to: '1' },
        { deliver: true, provider: 'telegram', transform: { module: 'pick-chat.ts' } }]) {
        expect(() => configFromObject({ providers, hooks: { token: 't', mappings: [{ ...agentMapping, ...m }] } }, '/x/h.yaml', {}), JSON.stringify(m)).to.not.throw();
      }
    });
  });

  describe('secrets', () => {
    const SECRET = 'Sup3rSecretValue';
    it('never appear in problem messages', () => {
      const ps = problemsFor({
        hooks: { token: [SECRET], tokn: SECRET, mappings: [{ ...agentMapping, secret: { v: SECRET } }] },
        agent: { apiKey: { key: SECRET } },
        providers: { telegram: { botToken: [SECRET], apiKey: SECRET }, msteams: { appPassword: 42 } },
      });
      expect(ps.length).to.be.greaterThan(4);
      expect(JSON.stringify(ps)).not.to.include(SECRET);
    });
    it('are not echoed by YAML or JSON syntax errors on their line', () => {
      const yamlFile = write(`hooks:\n  token: ${SECRET}\n   x: [\n`);
      const jsonFile = write(`{"hooks": {"token": "${SECRET}" "path": "/h"}}`, 'c.json');
      for (const file of [yamlFile, jsonFile]) {
        const err = (() => { try { loadConfig(file, {}); } catch (e) { return e as Error; } })();
        expect(err).to.be.instanceOf(ConfigError);
        expect(err?.message).not.to.include(SECRET);
      }
    });
    it('from the environment are not echoed either', () => {
      const ps = problemsFor({ hooks: { token: '${TOK}', zzzz: '${TOK}' }, providers: { telegram: { botToken: '${TOK}', apiBase: '${TOK}', x: 1 } }, server: { port: '${TOK}' } }, { TOK: SECRET });
      // The apiBase is no URL either: said without its value, which came from a variable.
      expect(ps.length).to.equal(4);
      expect(ps).to.deep.include({ path: 'providers.telegram.apiBase', message: 'must be an http:// or https:// URL' });
      expect(JSON.stringify(ps)).not.to.include(SECRET);
    });
  });

  it('yamlPath turns a JSON pointer into a YAML path', () => {
    expect(yamlPath('/hooks/mappings/2/transform/module')).to.equal('hooks.mappings[2].transform.module');
    expect(yamlPath('/agent/aliases/a.b~1c')).to.equal('agent.aliases["a.b/c"]');
    expect(yamlPath('/0/messageTemplate', 'presets.email')).to.equal('presets.email[0].messageTemplate');
  });
});
