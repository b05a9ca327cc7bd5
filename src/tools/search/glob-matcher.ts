import picomatch from 'picomatch'

import {compileLinear, PatternError} from './linear-regex.js'

/**
 * Glob matchers that cannot hang. picomatch turns a glob into a JavaScript regex of lazy wildcards
 * (`[^/]*?` per `*`), which V8 backtracks through: `*a*a*a*a*a*a*a*a*a*a*b` against a long name of `a`s
 * would take hours. The same regex runs here under RE2 (linear-regex.ts), in time linear in the path.
 *
 * picomatch guards its wildcards with lookaheads RE2 cannot run; they keep `*` and `**` from matching
 * the path segments `.` and `..` and the empty string, none of which a crawled path ever holds, so they
 * are dropped. What remains of lookaround (a negated extglob, `!(...)`) is refused.
 */

interface GlobOptions {
  /** picomatch's posix option: `/` only as the separator. */
  posix?: boolean
}

/** Longer globs are refused: the compiled program, and so the work per path, grows with the pattern. */
export const MAX_GLOB_LENGTH = 4096

// picomatch's lookaheads for `.`, `..` and empty segments (lib/constants.js), with dot: true.
const SEGMENT_GUARDS = [String.raw`(?!(?:^|\/)\.{1,2}(?:\/|$))`, String.raw`(?!\.{1,2}(?:\/|$))`, String.raw`(?!\.{0,1}(?:\/|$))`, '(?=.)']

/** A test of paths (`/`-separated) against `glob`, as picomatch(glob, {dot: true}) would answer for crawled paths. Throws PatternError. */
export function globMatcher(glob: string, options: GlobOptions = {}): (path: string) => boolean {
  if (glob.startsWith('!') && !glob.startsWith('!(')) {
    // A negated glob (`!*.test.ts`): everything the rest does not match.
    const matches = globMatcher(glob.slice(1), options)
    return (path) => !matches(path)
  }

  if (glob.length > MAX_GLOB_LENGTH) throw new PatternError(`The glob is ${glob.length} characters long; at most ${MAX_GLOB_LENGTH} are allowed.`)
  let source: string
  try {
    source = picomatch.makeRe(glob, {dot: true, posix: options.posix}).source
  } catch (error) {
    throw new PatternError(`Invalid glob ${glob}: ${(error as Error).message}`)
  }

  for (const guard of SEGMENT_GUARDS) source = source.replaceAll(guard, '')
  if (/\(\?<?[=!]/.test(source)) {
    throw new PatternError(`The glob ${glob} uses a negated extglob !(...), which Grep and Glob do not support: list the files you want instead.`)
  }

  const {regex} = compileLinear(source, {lines: false})
  // picomatch also takes a path spelled exactly as the glob (a name with glob characters in it).
  return (path) => path === glob || regex.test(path)
}
