import { expect } from 'chai';
import { accessLine } from '../../../src/http/access-log.js';
import { createLogger } from '../../../src/log.js';

/** What pino itself writes for the same fields, through createLogger (the format the line keeps). */
function pinoLine(fields: Record<string, unknown>, bindings?: Record<string, unknown>): string {
  const out: string[] = [];
  const log = createLogger('info', { write: (line: string) => void out.push(line) });
  (bindings ? log.child(bindings) : log).info(fields, 'request');
  return out[0]!;
}
const timeless = (line: string) => line.replace(/"time":\d+/, '"time":0');

describe('http: the access line is built by hand, byte for byte what pino writes', () => {
  const cases: [string, Parameters<typeof accessLine>, Record<string, unknown>?][] = [
    ['a plain request', ['', '0a1b2c3d-1', 'POST', '/hooks/wake', 'wake', 200, 1.2, undefined, false]],
    ['a named sender', ['', 'sender-id.42', 'POST', '/hooks/github', 'mapping:github', 202, 0, 'ci-bot', false]],
    ['a client that left', ['', '0a1b2c3d-2', 'GET', '/console/', 'console', 200, 1234.5, undefined, true]],
    ['quotes, backslashes, escapes and non-ASCII in the path', ['', '0a1b2c3d-3', 'GET', '/x"y\\z/\\x1b/é/💥', 'unmatched', 404, 0.1, undefined, false]],
    // A mapping id, a token's name and a sender's request id may need escaping too (the id only reaches the line when SENDER_ID admits it, but the line does not rely on that).
    ['a route label, sender and request id that need escaping', ['', 'id "1"', 'POST', '/hooks/x', 'mapping:a"b\\c', 202, 0, 'ci "bot" é', false]],
    ['the same again (their JSON text is kept once made)', ['', 'id "1"', 'POST', '/hooks/x', 'mapping:a"b\\c', 202, 0, 'ci "bot" é', false]],
    // serve's logger is a child naming its instance: the line keeps the child's bindings, as pino's would.
    ['a child logger\'s bindings (serve\'s instance id)', [',"instance":"i-1"', '0a1b2c3d-4', 'POST', '/hooks/wake', 'wake', 200, 2, undefined, false], { instance: 'i-1' }],
  ];
  for (const [what, args, bindings] of cases) {
    it(what, () => {
      const [, reqId, method, path, route, status, ms, sender, aborted] = args;
      const fields: Record<string, unknown> = { reqId, method, path, route, status, ms };
      if (sender !== undefined) fields.sender = sender;
      if (aborted) fields.aborted = true;
      const line = accessLine(...args);
      expect(timeless(line)).to.equal(timeless(pinoLine(fields, bindings)));
      expect(JSON.parse(line)).to.include({ level: 30, msg: 'request', path });
    });
  }
});
