import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { chromium, type Browser } from 'playwright-core';

/** `HOOKRELAY_CHROMIUM`, else @sparticuz/chromium's binary (https://github.com/Sparticuz/chromium#usage). */
export async function launchChromium(): Promise<Browser> {
  const given = process.env.HOOKRELAY_CHROMIUM;
  if (given) {
    if (!existsSync(given)) throw new Error(`HOOKRELAY_CHROMIUM names ${given}, which does not exist`);
    return chromium.launch({ executablePath: given });
  }
  const { default: packaged } = await import('@sparticuz/chromium');
  const executablePath = await packaged.executablePath();
  const libraries = missingLibraries(executablePath);
  return chromium.launch({ executablePath, ...(libraries && { env: { ...process.env, LD_LIBRARY_PATH: libraries } }) });
}

/**
 * The binary links NSS and expat, which a machine without a desktop may lack; where `ldd`
 * finds one missing, the package's Amazon Linux 2023 build of them (glibc ≥ 2.34) is used.
 */
function missingLibraries(executable: string): string | undefined {
  let report: string;
  try {
    report = execFileSync('ldd', [executable], { encoding: 'utf8' });
  } catch {
    return undefined;
  }
  if (!report.includes('not found')) return undefined;
  const dir = join(dirname(executable), 'al2023');
  if (!existsSync(join(dir, 'lib'))) {
    const bin = join(dirname(createRequire(import.meta.url).resolve('@sparticuz/chromium')), '..', '..', 'bin');
    mkdirSync(dir, { recursive: true });
    execFileSync('tar', ['-x', '-C', dir], { input: brotliDecompressSync(readFileSync(join(bin, 'al2023.tar.br'))) });
  }
  return join(dir, 'lib');
}
