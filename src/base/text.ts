/**
 * Text as wave's surfaces must show it, whoever wrote it (a plan, the model, a forge user): at a
 * terminal with its control characters visible, and where Markdown is rendered verbatim (a fenced block),
 * in a table its cells cannot break, or as inert text (no image, link, heading or HTML of its own).
 */

/**
 * Control characters as a terminal must show them: visible, never obeyed. A plan's check like
 * `exit 0\x1b[2K\rnpm test` would otherwise display as `npm test`, and a line of a diff could be erased
 * from view. C0 controls and DEL in caret notation (ESC is `^[`, CR `^M`), C1 controls as `\x9b`, and the
 * bidirectional overrides (a "Trojan source" reorders what is read) as `<U+202E>`. Newlines and tabs stay:
 * they do what they look like. Every terminal surface (sink.ts, progress.ts) writes through this.
 */
export function visible(text: string): string {
  return text.replaceAll(CONTROLS, (char) => {
    const code = char.codePointAt(0)!
    if (code < 0x20) return `^${String.fromCodePoint(code + 0x40)}`
    if (code === 0x7f) return '^?'
    if (code <= 0x9f) return `\\x${code.toString(16)}`
    return `<U+${code.toString(16).toUpperCase()}>`
  })
}

// Everything but \t and \n below 0x20, DEL, C1, and the bidirectional embeddings, overrides and isolates.
const CONTROLS = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g

/**
 * Text shown verbatim where Markdown is rendered (a job summary, a pull-request comment): a fenced code
 * block, its fence longer than any run of backticks inside, so that nothing in the text can close it (a
 * line of tildes cannot close a backtick fence). Rendered, a plan could hide words from its reviewer (an
 * HTML comment, raw HTML, a collapsed block) that its sha256 binds and the run's model reads: every
 * surface shows a plan, and a diff of one, through this.
 */
export function fencedBlock(text: string, info = ''): string {
  const longest = Math.max(0, ...Array.from(text.matchAll(/`+/g), (run) => run[0].length))
  const fence = '`'.repeat(Math.max(3, longest + 1))
  return `${fence}${info}\n${text.replace(/\r?\n$/, '')}\n${fence}`
}

export function markdownTable(rows: Array<[string, string]>): string {
  const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ')
  return ['| | |', '|---|---|', ...rows.map(([k, v]) => `| ${cell(k)} | ${cell(v)} |`)].join('\n')
}

/**
 * Untrusted words (the model's to-do list and questions) for one line of Markdown, inert: white space
 * folded to one line, cut at `max` characters, and every character that starts Markdown's forms
 * backslash-escaped (no image, link, autolink, heading, list, emphasis, code span, math or HTML of the
 * writer's), `&` as an entity (no character reference either), `@` kept from mentioning anyone.
 */
export function inertMarkdown(text: string, max = 300): string {
  const line = text.replaceAll(/\s+/g, ' ').trim()
  const cut = line.length > max ? `${line.slice(0, max - 1)}…` : line
  return cut
    .replaceAll(/[\\`*_[\]!#|~{}$]|:(?=\/\/)/g, (char) => `\\${char}`)
    .replace(/^([-+=]|\d+(?=[.)]))/, (lead) => (/\d/.test(lead) ? `${lead}\\` : `\\${lead}`))
    .replaceAll(/\bwww\./gi, (www) => `${www.slice(0, 3)}\\.`)
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('@', '@\u200B')
}

/** At most `max` items of a list, and a line saying how many more there were (a comment has a size limit). */
export function cappedList(items: string[], max: number, more = (count: number) => `- … and ${count} more`): string[] {
  return items.length > max ? [...items.slice(0, max), more(items.length - max)] : items
}
