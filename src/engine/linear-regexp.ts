import v8 from 'node:v8';

// V8's non-backtracking engine ("An additional non-backtracking RegExp engine",
// https://v8.dev/blog/non-backtracking-regexp) runs regexes with the `l` flag in time linear
// in the subject. It sits behind this flag; the flag only makes `l` legal and changes no
// other regex, so setting it at run time (Node 20, V8 11.3) is safe.
v8.setFlagsFromString('--enable-experimental-regexp-engine');

/** Whether this Node.js has the engine at all (a future one may drop the flag). */
const LINEAR_ENGINE = (() => {
  try {
    return new RegExp('a', 'l').flags.includes('l');
  } catch {
    return false;
  }
})();

/**
 * The regex `source` with `flags` on the linear-time engine; throws an Error saying what to
 * change (without the pattern: callers name it) when it cannot run there. Regexes that users
 * write and payloads are matched against (JSONata literals, JSON Schema `pattern`s) run only
 * here, so that no payload can make one backtrack for minutes.
 */
export function linearRegExp(source: string, flags: string): RegExp {
  if (!LINEAR_ENGINE) throw new Error('cannot run: this Node.js has no linear-time regex engine (V8 flag --enable-experimental-regexp-engine)');
  try {
    return new RegExp(source, flags.includes('l') ? flags : `${flags}l`);
  } catch {
    // classified below
  }
  const tail = 'because payload text could stall the gateway';
  if (flags.includes('i')) return fail(`the i flag is not supported by the linear-time engine, ${tail}; lower-case the text first ($lowercase in JSONata) and match it against a lower-case pattern instead`);
  // (V8 11.3's linear engine has no unicode mode either: callers drop `u` where they can.)
  if (flags.includes('u')) return fail(`unicode mode (\\p{…}, \\u{…}) is not supported by the linear-time engine, ${tail}`);
  // An escape is a backslash after an even run of backslashes (`\\1` is a backslash and a 1).
  if (/(?:^|[^\\])(?:\\\\)*(?:\\[1-9]|\\k<|\(\?<?[=!])/.test(source)) return fail(`backreferences and lookaround are not allowed, ${tail}`);
  return fail(`counted repetitions are limited (e.g. {1,16}; nest fewer or use + and *), ${tail}`);
}

function fail(why: string): never {
  throw new Error(`cannot run in linear time: ${why}`);
}
