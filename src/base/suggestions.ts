/**
 * "Did you mean": the names closest to a mistyped one (a command, a flag, a flag's value, a plan), by
 * edit distance, and what a typed command id means. Used only on the way to an error: a command that
 * succeeds never computes one.
 */
import {distance} from 'fastest-levenshtein'

/**
 * The candidates close enough to `typed` to be what was meant, nearest first (ties kept, at most
 * three). Close enough: within a third of the typed length in edits (at least one), or the typed text
 * starting a candidate (`brave` for `brave-otter`). Case is ignored.
 */
export function closest(typed: string, candidates: Iterable<string>): string[] {
  const wanted = typed.toLowerCase()
  if (!wanted) return []
  const allowed = Math.max(1, Math.floor(wanted.length / 3))
  const scored: Array<{candidate: string; score: number}> = []
  for (const candidate of new Set(candidates)) {
    const name = candidate.toLowerCase()
    if (name === wanted) continue
    // Two neighbouring letters swapped (`hihg`) is one slip, though two edits; so is a prefix of three
    // or more characters (`brave` for `brave-otter`), whatever is missing after it.
    const slip = swapped(wanted, name) || (wanted.length >= 3 && name.startsWith(wanted))
    const score = slip ? 1 : distance(wanted, name)
    if (score <= allowed) scored.push({candidate, score})
  }

  if (scored.length === 0) return []
  const best = Math.min(...scored.map(({score}) => score))
  return scored
    .filter(({score}) => score === best)
    .map(({candidate}) => candidate)
    .sort()
    .slice(0, 3)
}

/** Whether `b` is `a` with two neighbouring characters swapped. */
function swapped(a: string, b: string): boolean {
  if (a.length !== b.length) return false
  const at = [...a].findIndex((char, i) => char !== b[i])
  return at !== -1 && a[at] === b[at + 1] && a[at + 1] === b[at] && a.slice(at + 2) === b.slice(at + 2)
}

/** ` (did you mean x?)`, ` (did you mean x or y?)`, or '' when nothing is close; `show` writes a candidate as the user would type it. */
export function didYouMean(typed: string, candidates: Iterable<string>, show: (candidate: string) => string = (candidate) => candidate): string {
  const found = closest(typed, candidates).map(show)
  if (found.length === 0) return ''
  const listed = found.length === 1 ? found[0] : `${found.slice(0, -1).join(', ')} or ${found.at(-1)}`
  return ` (did you mean ${listed}?)`
}

/** A command as the "did you mean" of commands knows it: its id (`plans:rm`). */
interface Named {
  id: string
}

/**
 * What a typed command id (`plann`, `plan:fix:it`) means. oclif joins every word before the first flag
 * into the id when a command takes no argument: the longest typed command that exists or is close wins,
 * so `plugins instal x` is `plugins install` mistyped, and `plan fix it` is `plan` with two words more.
 */
export function typedCommand<C extends Named>(
  typedId: string,
  commands: C[],
): {command: C; rest: string[]} | {command?: undefined; typed: string[]; suggestion: string} {
  const typed = typedId.split(':')
  for (let words = typed.length; words >= 1; words--) {
    const part = typed.slice(0, words)
    const command = commands.find((candidate) => candidate.id === part.join(':'))
    if (command) return {command, rest: typed.slice(words)}
    const suggestion = didYouMean(
      part.join(':'),
      commands.map(({id}) => id).filter((id) => id.split(':').length === words),
      (id) => id.replaceAll(':', ' '),
    )
    if (suggestion) return {suggestion, typed: part}
  }

  return {suggestion: '', typed: typed.slice(0, 1)}
}

/** The one line for a command that does not exist: `wave: unknown command plann (did you mean plan or plans?). See wave --help.` */
export const unknownCommandLine = ({suggestion, typed}: {suggestion: string; typed: string[]}) =>
  `wave: unknown command ${typed.join(' ')}${suggestion}. See wave --help.`
