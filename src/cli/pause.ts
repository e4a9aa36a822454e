import type { Command } from 'commander';
import { configOption } from './arguments.js';
import { load, PAUSE_READS } from './config.js';
import { fail, orExit } from './exit.js';

/** CONTRACT.md §14: written straight into the store; a running gateway sees it within a second. */
export function pauseCommands(program: Command): void {
  for (const [name, paused, description] of [
    ['pause', true, "hold a mapping's agent runs and wakes: its requests are still accepted and committed, and carried out, in order, once it is resumed"],
    ['resume', false, 'release a paused mapping: what it held is carried out, in order'],
  ] as const) {
    program
      .command(name)
      .description(description)
      .argument('<mapping>', 'a mapping id')
      .addOption(configOption())
      .action((mapping: string, opts: { config?: string }) => setPaused(mapping, paused, opts.config));
  }
}

async function setPaused(mapping: string, paused: boolean, configFile: string | undefined): Promise<void> {
  const { config } = await load(configFile, PAUSE_READS);
  // hooks.mappings holds the presets' mappings too (after the config's own).
  const known = config.hooks.mappings.map((m) => m.id);
  if (!known.includes(mapping)) {
    fail(`no mapping "${mapping}" in this config; its mappings are: ${known.length > 0 ? known.join(', ') : '(none)'}`);
  }
  const { openPauseControl } = await import('../store/pause-control.js');
  const control = await orExit(() => openPauseControl(config));
  try {
    const was = (await control.paused()).includes(mapping);
    await control.setPaused(mapping, paused);
    const now = paused ? 'paused' : 'resumed';
    process.stdout.write(was === paused ? `mapping ${mapping} ${paused ? 'was already paused' : 'was not paused: nothing to resume'}\n`
      : `mapping ${mapping} ${now}${paused ? ': its runs and wakes are held until `hookrelay resume ' + mapping + '`' : ': what it held is carried out, in order'}\n`);
  } finally {
    await control.close();
  }
}
