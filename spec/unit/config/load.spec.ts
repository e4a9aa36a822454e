import { dirname, join } from 'node:path';
import { expect } from 'chai';
import { configFromObject, configSource, loadConfig } from '../../../src/config/load.js';
import { expandEnv } from '../../../src/config/read.js';
import { agentMapping, problemsFor, problemsOf, write } from './load-support.js';

describe('config/load', () => {
  describe('configSource', () => {
    it('prefers --config, then $HOOKRELAY_CONFIG, then ./hookrelay.yaml', () => {
      expect(configSource('a.yaml', { HOOKRELAY_CONFIG: 'b.yaml' }).file).to.equal('a.yaml');
      expect(configSource(undefined, { HOOKRELAY_CONFIG: 'b.yaml' }).file).to.equal('b.yaml');
      expect(configSource(undefined, {}).file).to.equal('./hookrelay.yaml');
    });
  });

  describe('${VAR} expansion', () => {
    const env = { SET: 'value', EMPTY: '' };
    it('expands ${VAR}, and reports an unset variable without default', () => {
      const missing: string[] = [];
      expect(expandEnv('a ${SET} b ${UNSET} c ${EMPTY}', env, (name) => missing.push(name))).to.equal('a value b  c ');
      expect(missing).to.deep.equal(['UNSET']);
    });
    it('refuses a config whose ${VAR} is unset and has no default, naming the key and the variable', () => {
      const ps = problemsFor({ hooks: { token: '${HOOKRELAY_TOKEN}', mappings: [{ ...agentMapping, to: 'x${CHAT}' }] }, agent: { apiKey: '${KEY:-}' } }, {});
      expect(ps).to.deep.equal([
        { path: 'hooks.token', message: '${HOOKRELAY_TOKEN} is not set: set HOOKRELAY_TOKEN, or write ${HOOKRELAY_TOKEN:-} (empty) or ${HOOKRELAY_TOKEN:-default}' },
        { path: 'hooks.mappings[0].to', message: '${CHAT} is not set: set CHAT, or write ${CHAT:-} (empty) or ${CHAT:-default}' },
      ]);
      // Set, even to empty, is not missing; ${VAR:-} asks for an empty default.
      expect(configFromObject({ hooks: { token: '${T}' }, agent: { apiKey: '${KEY:-}' } }, '/x/h.yaml', { T: '' }).config.hooks.token).to.equal('');
    });
    it('uses the :- default when the variable is unset or empty, as the shell does', () => {
      expect(expandEnv('${UNSET:-d1} ${EMPTY:-d2} ${SET:-d3} ${UNSET:-}', env)).to.equal('d1 d2 value ');
    });
    it('reads $${X} as a literal ${X}', () => {
      expect(expandEnv('$${SET} and $${UNSET:-x}', env)).to.equal('${SET} and ${UNSET:-x}');
    });
    it('expands string values only, never keys, and coerces to the type the key needs', () => {
      const file = write('server:\n  port: ${PORT:-9000}\nagent:\n  aliases:\n    ${KEY}: "${SET}"\n');
      const { config } = loadConfig(file, { SET: 'model-x', KEY: 'fast' });
      expect(config.server.port).to.equal(9000);
      expect(config.agent.aliases).to.deep.equal({ '${KEY}': 'model-x' });
    });
  });

  describe('parsing', () => {
    it('reads YAML and JSON (by extension) to the same config', () => {
      const yamlFile = write('hooks:\n  token: t\n  mappings:\n    - match: { path: x }\n      messageTemplate: hi\n');
      const yaml = loadConfig(yamlFile, {});
      const json = loadConfig(write(JSON.stringify({ hooks: { token: 't', mappings: [agentMapping] } }), 'c.json', dirname(yamlFile)), {});
      expect(json.config).to.deep.equal(yaml.config);
      expect(json.config.hooks.mappings[0].messageTemplate).to.equal('hi');
    });
    it('reports YAML syntax errors with line and column', () => {
      const file = write('server:\n  port: 1\n   host: [\n');
      const [first] = problemsOf(() => loadConfig(file, {}));
      expect(first.path).to.match(new RegExp(`^${file.replace(/[.]/g, '\\.')}:\\d+:\\d+$`));
    });
    it('reports JSON syntax errors with line and column', () => {
      const file = write('{\n  "server": {\n    "port": 1,,\n  }\n}', 'c.json');
      const [first] = problemsOf(() => loadConfig(file, {}));
      expect(first.path).to.equal(`${file}:3:15`);
    });
    it('names a missing file', () => {
      expect(problemsOf(() => loadConfig('/nonexistent/hookrelay.yaml', {}))[0]).to.include({ path: '/nonexistent/hookrelay.yaml' });
    });
    it('takes an empty YAML value as "use the default"', () => {
      const { config } = loadConfig(write('hooks:\n  token:\n  mappings:\n'), {});
      expect(config.hooks.token).to.equal('');
      expect(config.hooks.mappings).to.deep.equal([]);
    });
  });

  // Issue 30, defect 7: read as "no settings", such a file served defaults (on a reload: no
  // mappings, a new token). A config file says something (CONTRACT.md §8).
  describe('a file that holds no settings, or not a map, is refused', () => {
    for (const [what, text, file] of [['empty', '', 'h.yaml'], ['only comments', '# a\n\n# b\n', 'h.yaml'], ['~', '~\n', 'h.yaml'], ['null', 'null', 'h.yaml'], ['JSON null', 'null', 'h.json']]) {
      it(`${what} (${file})`, () => {
        const path = write(text, file);
        expect(problemsOf(() => loadConfig(path, {}))).to.deep.equal([{ path, message: 'the config file holds no settings (it is empty, only comments, or null): write its keys (server, hooks, agent…) as in hookrelay.example.yaml' }]);
      });
    }
    for (const [what, text] of [['a list', '- hooks\n'], ['a string', 'hooks\n'], ['a number', '8788\n']]) {
      it(`${what}`, () => {
        const path = write(text);
        expect(problemsOf(() => loadConfig(path, {}))).to.deep.equal([{ path, message: 'the config must be a map of keys (server, hooks, agent…)' }]);
      });
    }
  });

  describe('defaults and normalisation', () => {
    it('fills every default', () => {
      const { config } = configFromObject({}, '/srv/hr/hookrelay.yaml', {});
      expect(config.server).to.deep.equal({ host: '127.0.0.1', port: 8788, trustedProxies: [], publicHosts: [], headersTimeoutMs: 20000, requestTimeoutMs: 60000, maxConnections: 1024, maxHeaderBytes: 16384, maxConnectionsPerAddress: 128, metrics: true, console: true, adminToken: '' });
      expect(config.store).to.deep.equal({ kind: 'sqlite', durability: 'fsync', retainDays: 30, poolSize: 10, leaseSeconds: 30 });
      expect(config.log.level).to.equal('info');
      expect(config.heartbeat.everySeconds).to.equal(1800);
      expect(config.hooks).to.include({ enabled: true, token: '', path: '/hooks', maxBodyBytes: 262144, allowQueryToken: true, defaultSessionKey: '', acceptStatus: 202, mainSummary: 'always', allowUnsafeExternalContent: false, maxFanOut: 200, transformTimeoutMs: 5000 });
      expect(config.hooks.allowedSessionKeyPrefixes).to.deep.equal(['hook:']);
      expect(config.agent).to.include({ baseUrl: 'http://127.0.0.1:11434/v1', model: 'llama3.2', timeoutSeconds: 600, maxConcurrent: 4, historyTurns: 20 });
      expect(config.agent.systemPrompt).to.be.a('string').and.not.equal('');
    });
    it("drops empty (null) values so that defaults apply, but keeps a mapping schema's own nulls", () => {
      const file = write([
        'hooks:',
        '  maxBodyBytes:',
        '  mappings:',
        '    - match: { path: x }',
        '      messageTemplate: hi',
        '      timeoutSeconds: ~',
        '      schema:',
        '        type: object',
        '        properties:',
        '          cleared: { const: null }',
        '          kind: { enum: [a, null] }',
      ].join('\n'));
      const { config } = loadConfig(file, {});
      expect(config.hooks.maxBodyBytes).to.equal(262144);
      expect(config.hooks.mappings[0]).not.to.have.property('timeoutSeconds');
      expect(config.hooks.mappings[0].schema).to.deep.equal({ type: 'object', properties: { cleared: { const: null }, kind: { enum: ['a', null] } } });
    });
    it('takes a fractional timeoutSeconds as whole seconds, rounded down and at least 1 (as OpenClaw does)', () => {
      const { config } = configFromObject({ agent: { timeoutSeconds: 0.5 }, hooks: { mappings: [{ ...agentMapping, timeoutSeconds: 30.5 }] } }, '/x/c.yaml', {});
      expect(config.agent.timeoutSeconds).to.equal(1);
      expect(config.hooks.mappings[0]!.timeoutSeconds).to.equal(30);
    });
    it('fills mapping defaults, numbers ids by position and folds channel into provider', () => {
      const { config } = configFromObject({ hooks: { mappings: [agentMapping, { id: 'own', action: 'wake', textTemplate: 't', channel: 'slack' }] }, providers: { slack: { botToken: 'xoxb-1' } } }, '/x/c.yaml', {});
      const [a, b] = config.hooks.mappings;
      expect(a).to.include({ id: 'mapping-1', action: 'agent', wakeMode: 'now', engine: 'handlebars', provider: 'last' });
      expect(a.deliver).to.equal(undefined);
      expect(b).to.include({ id: 'own', provider: 'slack' });
      expect(b).not.to.have.property('channel');
    });
    it('fills provider defaults for configured providers only', () => {
      const { config } = configFromObject({ providers: { telegram: { botToken: 'x' }, whatsapp: {} } }, '/x/c.yaml', {});
      expect(config.providers.telegram).to.deep.equal({ botToken: 'x', apiBase: 'https://api.telegram.org' });
      expect(config.providers.whatsapp).to.include({ apiVersion: 'v21.0', apiBase: 'https://graph.facebook.com' });
      expect(config.providers).not.to.have.property('slack');
    });
    it('drops trailing slashes of hooks.path and the slashes around match.path', () => {
      const { config } = configFromObject({ hooks: { path: '/in/hooks//', mappings: [{ ...agentMapping, match: { path: '/github/' } }] } }, '/x/c.yaml', {});
      expect(config.hooks.path).to.equal('/in/hooks');
      expect(config.hooks.mappings[0].match.path).to.equal('github');
    });
    it('resolves relative dataDir and transformsDir against the config file, keeps absolute ones', () => {
      const { config, baseDir, file } = configFromObject({ dataDir: 'state', hooks: { transformsDir: '/opt/t' } }, '/srv/hr/conf.yaml', {});
      expect([file, baseDir, config.dataDir, config.hooks.transformsDir]).to.deep.equal(['/srv/hr/conf.yaml', '/srv/hr', '/srv/hr/state', '/opt/t']);
      expect(configFromObject({}, '/srv/hr/conf.yaml', {}).config.hooks.transformsDir).to.equal('/srv/hr/transforms');
    });
    it('deep-freezes the result', () => {
      const loaded = configFromObject({ hooks: { mappings: [agentMapping] } }, '/x/c.yaml', {});
      expect(Object.isFrozen(loaded)).to.equal(true);
      expect(Object.isFrozen(loaded.config.hooks.mappings[0].match)).to.equal(true);
      expect(() => { (loaded.config.server as { port: number }).port = 1; }).to.throw(TypeError);
    });
  });
});
