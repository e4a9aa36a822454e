// Injected by scripts/build.mjs into the CommonJS build of the writer thread: what
// `import.meta.url` stands for there, the URL of the built file itself.
import { pathToFileURL } from 'node:url';

export const importMetaUrl = pathToFileURL(__filename).href;
