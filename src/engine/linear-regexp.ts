// V8's non-backtracking engine (https://v8.dev/blog/non-backtracking-regexp), behind a flag Node
// honours only on the command line (https://nodejs.org/api/v8.html#v8setflagsfromstringflags).
const LINEAR_ENGINE = (() => {
  try {
    return new RegExp('a', 'l').flags.includes('l');
  } catch {
    return false;
  }
})();

/** The regex on V8's linear-time engine, for users' regexes that payloads are matched against; throws saying what to change. */
export function linearRegExp(source: string, flags: string): RegExp {
  if (!LINEAR_ENGINE) throw new Error('cannot run: node was started without --enable-experimental-regexp-engine, the V8 flag of the linear-time regex engine (the hookrelay bin and `npm start` pass it)');
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
