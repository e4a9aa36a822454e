#!/usr/bin/env node
// The `hookrelay` bin: registers tsx so that the TypeScript sources (and TypeScript
// transform modules) load without a build step, then hands over to the CLI.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('./cli.ts');
await main(process.argv);
