import { SENDERS } from '../../src/senders/index.js';
import type { SenderDescriptor } from '../../src/senders/descriptor.js';

/** The hook name a sender's starting mapping uses: its scheme. */
const at = (d: SenderDescriptor, text: string) => text.replaceAll('{hooks.path}/NAME', `/hooks/${d.scheme}`).replaceAll('NAME', d.scheme);
const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

/** A sender's starting mapping as a complete `hooks:` section, after the `server.publicUrl` a URL-signing sender needs. */
export function senderMapping(d: SenderDescriptor): string {
  const lines = at(d, d.docs.mapping).split('\n');
  const server = d.signsUrl ? ['server:', '  publicUrl: https://hooks.example.com   # where senders reach this gateway (the part before /hooks)'] : [];
  return [...server, 'hooks:', '  mappings:', `    - id: ${d.scheme}`, ...lines.map((l) => `      ${l}`)].join('\n');
}

/** The sender table of docs/senders.md, from the descriptors (src/senders/), written by `npm run docs`. */
export function sendersGuide(): string {
  const out = [
    '<!-- generated from src/senders/*.ts by `npm run docs`; edit the descriptors, not this text -->',
    '',
    '| Sender | `verify.scheme` | In the sender\'s settings | What is checked |',
    '|---|---|---|---|',
  ];
  for (const d of SENDERS) {
    const tolerance = d.tolerance === undefined ? '' : `; within ${d.tolerance} s (\`toleranceSeconds\`)`;
    out.push(`| [${cell(d.docs.sender)}](#${d.scheme}) | \`${d.scheme}\` | ${cell(at(d, d.docs.settings))} | ${cell(d.checks)}${tolerance} |`);
  }
  out.push('');
  for (const d of SENDERS) {
    out.push(`### ${d.scheme}`, '', `${d.docs.sender}: ${at(d, d.docs.settings)}`, '', '```yaml', senderMapping(d), '```', '');
  }
  return `${out.join('\n').trimEnd()}\n`;
}
