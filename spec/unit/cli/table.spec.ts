import { expect } from 'chai';
import { colourOn, createTable } from '../../../src/cli/table.js';

describe('cli/table', () => {
  it('colour only on a terminal, never with NO_COLOR set to anything (https://no-color.org) nor TERM=dumb', () => {
    expect(colourOn({ isTTY: true }, {})).to.equal(true);
    expect(colourOn({ isTTY: true }, { NO_COLOR: '' })).to.equal(true); // empty: not set
    expect(colourOn({ isTTY: true }, { NO_COLOR: '1' })).to.equal(false);
    expect(colourOn({ isTTY: true }, { TERM: 'dumb' })).to.equal(false);
    expect(colourOn({ isTTY: false }, {})).to.equal(false);
    expect(colourOn({}, {})).to.equal(false);
  });

  it('headers once, columns as wide as their widest cell, the last unpadded, outside text escaped', () => {
    let out = '';
    const table = createTable(['A', 'LONGER', 'LAST'], (t) => void (out += t), false);
    table.print([['xyz', 'b', 'end'], ['1', 'two\nlines', '']]);
    table.print([]);
    table.print([['k', 'l', 'm']]);
    expect(out.split('\n')).to.deep.equal(['A    LONGER      LAST', 'xyz  b           end', '1    two\\nlines', 'k    l           m', '']);
  });
});
