import { expect } from 'chai';
import { esc, html } from '../../src/console/html.js';

describe('console/html: the one escaping rule', () => {
  it('escapes every interpolated value for text and quoted attributes alike', () => {
    const evil = `<script>alert("x")</script><img src=x onerror='y'>&amp;`;
    expect(html`<td title="${evil}">${evil}</td>`.text).to.equal(
      '<td title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=&#39;y&#39;&gt;&amp;amp;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=&#39;y&#39;&gt;&amp;amp;</td>',
    );
    expect(esc('"\'<>&')).to.equal('&quot;&#39;&lt;&gt;&amp;');
  });

  it('keeps markup built by html itself, joins lists, and renders nothing for undefined, null and false', () => {
    const rows = ['<a>', 'b'].map((t) => html`<li>${t}</li>`);
    expect(html`<ul>${rows}</ul>${undefined}${null}${false}${0}`.text).to.equal('<ul><li>&lt;a&gt;</li><li>b</li></ul>0');
  });

  it('does not take a plain string for markup, whatever it holds', () => {
    const looksLikeMarkup = '<b>bold</b>';
    expect(html`${looksLikeMarkup}`.text).to.equal('&lt;b&gt;bold&lt;/b&gt;');
  });
});
