import { expect } from 'chai';
import { toText } from '../../../src/engine/to-text.js';

describe('engine/to-text', () => {
  it('renders strings as they are, scalars with String, objects as JSON, nothing as empty', () => {
    expect(toText('a<b>&')).to.equal('a<b>&');
    expect(toText(3.5)).to.equal('3.5');
    expect(toText(false)).to.equal('false');
    expect(toText(0)).to.equal('0');
    expect(toText({ a: [1, 'x'] })).to.equal('{"a":[1,"x"]}');
    expect(toText(['a', 'b'])).to.equal('["a","b"]');
    expect(toText(null)).to.equal('');
    expect(toText(undefined)).to.equal('');
    expect(toText(() => 'code')).to.equal('');
  });
});
