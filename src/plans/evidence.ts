/**
 * A check's kept output: what the model, the job summary and the plan's comment see of it. A test runner
 * says what failed anywhere in its output (tape's `not ok 64` sits at line 98 of 240, before nyc's
 * coverage table), so the tail alone loses it. This keeps the head, the tail and every line that looks
 * like a failure (`not ok`, `FAIL`, `Error`, `AssertionError`, a stack's first frame), each with its
 * line number, within a cap; the whole output goes to a file (checks.ts).
 *
 * It reads the output as a stream, once: memory stays bounded whatever a check prints.
 */

/** Characters of kept output for one check: room for the head, the tail and the failures, small enough for a retry turn. */
export const KEPT_OUTPUT_CHARS = 6000
const HEAD_LINES = 15
const TAIL_LINES = 40
/** The failure-looking lines kept at most (the first ones: later failures are often the first's echoes). */
const MAX_FAILURE_LINES = 40
/** A line longer than this is cut: a minified bundle's one line must not fill the cap. */
const MAX_LINE_CHARS = 400

/** A line a test runner or compiler writes when something failed. Case-sensitive on purpose: "0 errors" is no failure. */
const FAILURE = /\bnot ok\b|\bFAIL(?:ED|URE|S)?\b|Error\b|\bERR!|✗|✖|×/
/** A stack frame (V8, Python's traceback line, Java): the first of a run of them is kept with the error above it. */
const FRAME = /^\s+at \S|^\s+File ".*", line \d+/

type Kind = 'head' | 'failure' | 'tail'

export class OutputEvidence {
  private lineCount = 0
  private partial = ''
  private readonly head: Array<[number, string]> = []
  private readonly failures: Array<[number, string]> = []
  private tail: Array<[number, string]> = []
  private previousWasFrame = false

  /** Feeds output as it arrives (chunks may end mid-line). */
  append(text: string): void {
    if (!text) return
    const lines = (this.partial + text).split('\n')
    this.partial = lines.pop()!
    for (const line of lines) this.line(line)
  }

  /** The kept output, numbered, within `cap` characters; `wholeAt` names the file holding all of it. */
  render(cap = KEPT_OUTPUT_CHARS, wholeAt?: string): string {
    if (this.partial) {
      this.line(this.partial)
      this.partial = ''
    }

    const kept = new Map<number, {text: string; kind: Kind}>()
    for (const [n, text] of this.head) kept.set(n, {kind: 'head', text})
    for (const [n, text] of this.tail.slice(-TAIL_LINES)) if (!kept.has(n)) kept.set(n, {kind: 'tail', text})
    for (const [n, text] of this.failures) kept.set(n, {kind: 'failure', text})
    const total = this.lineCount
    if (total === 0) return ''
    // Short output is shown whole, without numbers: nothing was left out to find one's way around.
    if (kept.size === total) {
      const whole = [...kept.keys()].sort((a, b) => a - b).map((n) => kept.get(n)!.text)
      const text = whole.join('\n')
      if (text.length <= cap) return text
    }

    // Over the cap: drop the head's last lines first, then the tail's first, then the last failures.
    const order = (kind: Kind) => [...kept.entries()].filter(([, line]) => line.kind === kind).map(([n]) => n)
    const drops = [...order('head').reverse(), ...order('tail'), ...order('failure').reverse()]
    const numbers = () => [...kept.keys()].sort((a, b) => a - b)
    const width = String(total).length
    const header = (lines: number[]) => {
      const failures = lines.filter((n) => kept.get(n)!.kind === 'failure').length
      const where = wholeAt ? `; all of it in ${wholeAt}` : ''
      return `[${total} lines of output; kept ${lines.length}: its first and last lines${failures > 0 ? ` and ${failures} that look like failures` : ''}, numbered${where}]`
    }

    const draw = () => {
      const lines = numbers()
      const out = [header(lines)]
      let last = 0
      for (const n of lines) {
        if (n > last + 1) out.push(`     [... ${n === last + 2 ? `line ${last + 1}` : `lines ${last + 1}-${n - 1}`} not kept ...]`)
        out.push(`${String(n).padStart(width)} | ${kept.get(n)!.text}`)
        last = n
      }

      if (last < total) out.push(`     [... lines ${last + 1}-${total} not kept ...]`)
      return out.join('\n')
    }

    let text = draw()
    while (text.length > cap && drops.length > 0) {
      // Drop several at once when far over (one redraw per line would be slow), never more than the
      // excess could need: no kept line is longer than MAX_LINE_CHARS and its cut note.
      const over = text.length - cap
      const count = Math.max(1, Math.floor(over / (MAX_LINE_CHARS + 60)))
      for (const n of drops.splice(0, count)) kept.delete(n)
      text = draw()
    }

    return text.length > cap ? text.slice(0, cap) : text
  }

  private line(raw: string): void {
    this.lineCount++
    const n = this.lineCount
    const text = clip(raw.replace(/\r$/, ''))
    if (this.head.length < HEAD_LINES) this.head.push([n, text])
    const frame = FRAME.test(text)
    if (this.failures.length < MAX_FAILURE_LINES && ((frame && !this.previousWasFrame) || (!frame && FAILURE.test(text)))) this.failures.push([n, text])
    this.previousWasFrame = frame
    this.tail.push([n, text])
    // Trim only now and then, so that appending stays linear.
    if (this.tail.length > 2 * TAIL_LINES) this.tail = this.tail.slice(-TAIL_LINES)
  }
}

function clip(line: string): string {
  return line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)} [... ${line.length - MAX_LINE_CHARS} characters cut]` : line
}
