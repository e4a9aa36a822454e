#!/usr/bin/env node
// The `hookrelay` bin: registers tsx (its ESM and CommonJS hooks, as `node --import tsx`
// does) so that the TypeScript sources and TypeScript transform modules — wherever they
// live, in an ESM or a CommonJS package scope — load without a build step.
import 'tsx';

const { main } = await import('./cli.ts');
await main(process.argv);
