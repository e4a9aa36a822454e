import { expect } from 'chai';
import { SECRET_HEADERS, SECRET_KEYS } from '../../src/config/schema.js';
import { createLogger, redact } from '../../src/log.js';

const SECRET = 'Sup3rSecretValue';

/** A logger from {@link createLogger} writing into an array; returns the lines written by `fn`. */
function captured(fn: (log: ReturnType<typeof createLogger>) => void, level = 'info'): { raw: string; lines: Record<string, any>[] } {
  const raw: string[] = [];
  fn(createLogger(level, { write: (line: string) => void raw.push(line) }));
  return { raw: raw.join(''), lines: raw.map((l) => JSON.parse(l)) };
}

const CREDENTIALS = ['accessToken', 'password', 'appPassword', 'botToken', 'apiKey', 'token'] as const;

describe('log: redaction built from the config schema', () => {
  it('writes JSON lines to the destination it is given', () => {
    const { lines } = captured((log) => log.info({ runId: 'r1' }, 'hello'));
    expect(lines).to.have.length(1);
    expect(lines[0]).to.include({ runId: 'r1', msg: 'hello', level: 30 });
  });

  for (const key of CREDENTIALS) {
    it(`redacts ${key} at the top level and nested one, two and three objects deep`, () => {
      const { raw, lines } = captured((log) => {
        log.info({ [key]: SECRET }, 'top');
        log.info({ outer: { [key]: SECRET } }, 'one');
        log.warn({ a: { b: { [key]: SECRET } } }, 'two');
        log.error({ a: { b: { c: { [key]: SECRET } } } }, 'three');
      });
      expect(raw).not.to.include(SECRET);
      expect(lines[0]![key]).to.equal('[redacted]');
      expect(lines[1]!.outer[key]).to.equal('[redacted]');
      expect(lines[2]!.a.b[key]).to.equal('[redacted]');
      expect(lines[3]!.a.b.c[key]).to.equal('[redacted]');
    });
  }

  it('redacts a whole config as it would be logged: every provider credential, the hooks token and the API key', () => {
    const config = {
      hooks: { token: SECRET, path: '/hooks' },
      agent: { apiKey: SECRET, model: 'llama3.2' },
      providers: {
        whatsapp: { accessToken: SECRET, phoneNumberId: '99' },
        telegram: { botToken: SECRET },
        imessage: { password: SECRET, apiBase: 'http://bb' },
        discord: { botToken: SECRET },
        slack: { botToken: SECRET },
        msteams: { appId: 'app', appPassword: SECRET },
      },
    };
    const { raw, lines } = captured((log) => {
      log.info({ config: { providers: { whatsapp: { accessToken: SECRET } } } }, 'shape from the brief');
      log.info({ config }, 'whole config');
      log.info({ token: SECRET }, 'bare token');
    });
    expect(raw).not.to.include(SECRET);
    expect(lines[0]!.config.providers.whatsapp.accessToken).to.equal('[redacted]');
    // What is not a secret stays readable.
    expect(lines[1]!.config.providers.whatsapp.phoneNumberId).to.equal('99');
    expect(lines[1]!.config.providers.msteams.appId).to.equal('app');
    expect(lines[1]!.config.agent.model).to.equal('llama3.2');
    expect(lines[2]!.token).to.equal('[redacted]');
  });

  it('redacts the token-carrying headers under headers, req.headers and deeper, and at the top level', () => {
    const headers = { authorization: `Bearer ${SECRET}`, 'x-hookrelay-token': SECRET, 'x-openclaw-token': SECRET, cookie: `s=${SECRET}`, host: 'gw.example', 'content-type': 'application/json' };
    const { raw, lines } = captured((log) => {
      log.info({ headers }, 'headers');
      log.info({ req: { method: 'POST', headers } }, 'req.headers');
      log.info({ ctx: { req: { headers } } }, 'ctx.req.headers');
      log.info({ authorization: `Bearer ${SECRET}` }, 'top');
    });
    expect(raw).not.to.include(SECRET);
    for (const h of [lines[0]!.headers, lines[1]!.req.headers, lines[2]!.ctx.req.headers]) {
      expect(h).to.deep.equal({ authorization: '[redacted]', 'x-hookrelay-token': '[redacted]', 'x-openclaw-token': '[redacted]', cookie: '[redacted]', host: 'gw.example', 'content-type': 'application/json' });
    }
    expect(lines[3]!.authorization).to.equal('[redacted]');
    expect(lines[1]!.req.method).to.equal('POST');
  });

  it('redacts inside serialised errors, arrays and child logger lines', () => {
    const err = Object.assign(new Error('upstream refused'), { headers: { authorization: `Bearer ${SECRET}` } });
    const { raw, lines } = captured((log) => {
      log.error({ err }, 'with err');
      log.info({ list: [{ appPassword: SECRET }, { botToken: SECRET }] }, 'array');
      log.child({ component: 'runtime' }).warn({ delivery: { provider: { accessToken: SECRET } } }, 'child');
    });
    expect(raw).not.to.include(SECRET);
    expect(lines[0]!.err.headers.authorization).to.equal('[redacted]');
    expect(lines[0]!.err.message).to.equal('upstream refused');
    expect(lines[0]!.err.type, 'still serialised as an error of its class').to.equal('Error');
    expect(lines[2]!.component).to.equal('runtime');
  });

  it('keeps a redacted error an error: its class, message and cause are serialised once', () => {
    class UpstreamError extends Error {}
    const err = Object.assign(new UpstreamError('outer'), { config: { apiKey: SECRET } });
    err.cause = new Error('inner');
    const { raw, lines } = captured((log) => log.error({ err }, 'failed'));
    expect(raw).not.to.include(SECRET);
    expect(lines[0]!.err.type).to.equal('UpstreamError');
    expect(lines[0]!.err.message, "pino's own cause chain, once").to.equal('outer: inner');
    expect(lines[0]!.err.config.apiKey).to.equal('[redacted]');
  });

  it('takes its key names from the schema, and redacts every header name, at every depth down to six', () => {
    const names = [...SECRET_KEYS, ...SECRET_HEADERS];
    expect(SECRET_HEADERS).to.include.members(['authorization', 'x-hookrelay-token', 'x-openclaw-token', 'cookie']);
    const { raw } = captured((log) => {
      for (const name of names) {
        let nested: Record<string, unknown> = { [name]: SECRET };
        for (let depth = 0; depth <= 6; depth++) {
          log.info(nested, `depth ${depth}`);
          nested = { below: nested };
        }
      }
    });
    expect(raw).not.to.include(SECRET);
    expect(raw.split('\n').filter(Boolean)).to.have.length(names.length * 7);
  });

  it('leaves what it does not change as it was: no copy, no other key touched', () => {
    const plain = { runId: 'r1', nested: { sessionKey: 'hook:x' }, list: [1, { to: '42' }] };
    expect(redact(plain)).to.equal(plain);
    const withSecret = { runId: 'r1', nested: { token: SECRET, keep: 1 }, other: { a: 1 } };
    const out = redact(withSecret) as typeof withSecret;
    expect(out).to.deep.equal({ runId: 'r1', nested: { token: '[redacted]', keep: 1 }, other: { a: 1 } });
    expect(out.other).to.equal(withSecret.other);
    expect(withSecret.nested.token, 'the logged object itself is not changed').to.equal(SECRET);
  });
});
