import { expect } from 'chai';
import { parsePayload } from '../../../src/http/payload.js';

const json = (text: string) => parsePayload(Buffer.from(text), 'application/json', true);
const form = (text: string) => parsePayload(Buffer.from(text), 'application/x-www-form-urlencoded', true);

/** How bytes become a payload: the prototype keys, however spelled (issue 30, defects 4 and 6). */
describe('http/payload: prototype keys never survive parsing, however they were spelled', () => {
  const spellings = ['__proto__', '\\u005f_proto__', '__pr\\u006Fto__', '\\u005f\\u005f\\u0070\\u0072\\u006f\\u0074\\u006f\\u005f\\u005f', 'constructor', '\\u0063onstructor', 'prot\\u006ftype'];
  for (const key of spellings) {
    it(`a JSON key "${key}" is dropped at every depth`, () => {
      const out = json(`{"a":1,"${key}":{"x":1},"list":[{"${key}":{"x":2},"b":2}],"deep":{"deeper":{"${key}":3,"c":3}}}`);
      expect(JSON.stringify(out)).to.equal('{"a":1,"list":[{"b":2}],"deep":{"deeper":{"c":3}}}');
      expect(Object.getPrototypeOf(out)).to.equal(Object.prototype);
    });
  }

  it('escaped non-ASCII text (Python ensure_ascii) reads as the same payload', () => {
    const text = '{"name":"caf\\u00e9 \\u2014 na\\u00efve","k\\u00e9y":[1,{"\\u00fc":true}]}';
    expect(json(text)).to.deep.equal(JSON.parse(text));
  });

  it('form fields named like inherited members are plain fields; repeated fields become lists; prototype keys are skipped', () => {
    const out = form('toString=t&valueOf=v&hasOwnProperty=h&a=1&a=2&a=3&__proto__=p&%5F%5Fproto%5F%5F=q&constructor=c&prototype=x');
    expect(out).to.deep.equal({ toString: 't', valueOf: 'v', hasOwnProperty: 'h', a: ['1', '2', '3'] });
    expect(Object.keys(out)).to.deep.equal(['toString', 'valueOf', 'hasOwnProperty', 'a']);
    expect(structuredClone(out)).to.deep.equal(out); // what a transform worker is handed
  });
});
