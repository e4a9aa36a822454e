import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { parse } from 'yaml';
import { configFromObject, loadConfig } from '../../../src/config/load.js';

const EXAMPLE = fileURLToPath(new URL('../../../hookrelay.example.yaml', import.meta.url));
const REPO = fileURLToPath(new URL('../../../', import.meta.url)).replace(/\/$/, '');

describe('config: hookrelay.example.yaml (what npm start uses)', () => {
  it('loads and validates, on loopback without a token so that the first-use token is generated', () => {
    const { config } = loadConfig(EXAMPLE, {});
    expect(config.server).to.include({ host: '127.0.0.1', port: 8788 });
    expect(config.hooks.token).to.equal('');
    expect(config.dataDir).to.equal(`${REPO}/.hookrelay`);
    expect(config.hooks.transformsDir).to.equal(`${REPO}/transforms`);
    expect(config.hooks.presets).to.deep.equal(['email']);
    expect(config.hooks.mappings.map((m) => m.id)).to.deep.equal(['email', 'gmail']);
    expect(config.agent).to.include({ baseUrl: 'http://127.0.0.1:11434/v1', model: 'llama3.2' });
    expect(config.heartbeat.everySeconds).to.equal(1800);
    expect(config.providers.telegram).to.deep.equal({ botToken: '', apiBase: 'https://api.telegram.org' });
  });

  it('takes the token and the bot token from the environment', () => {
    const { config } = loadConfig(EXAMPLE, { HOOKRELAY_TOKEN: 'tok', TELEGRAM_BOT_TOKEN: '42:abc' });
    expect(config.hooks.token).to.equal('tok');
    expect(config.providers.telegram?.botToken).to.equal('42:abc');
  });

  it('its commented example mappings are valid once uncommented', () => {
    const lines = readFileSync(EXAMPLE, 'utf8').split('\n');
    const at = lines.findIndex((l) => l.trim() === 'mappings: []');
    expect(at).to.be.greaterThan(-1);
    let end = at + 1;
    while (/^ {2}# {2}/.test(lines[end])) end++;
    const examples = lines.slice(at + 1, end).map((l) => l.replace(/^ {2}#/, '  '));
    const text = [...lines.slice(0, at), '  mappings:', ...examples, ...lines.slice(end)].join('\n');
    const { config } = configFromObject(parse(text), EXAMPLE, {});
    const [push, ci] = config.hooks.mappings;
    expect(push).to.include({ id: 'github-push', action: 'agent', deliver: true });
    expect(push.transform).to.deep.equal({ module: 'github-push.ts' });
    expect(ci).to.include({ id: 'ci-status', action: 'wake', wakeMode: 'next-heartbeat' });
  });
});
