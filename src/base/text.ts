/** Text as the surfaces that render Markdown must show it: verbatim, or in a table that its cells cannot break. */

/**
 * Text shown verbatim where Markdown is rendered (a job summary, a pull-request comment): a fenced code
 * block, its fence longer than any run of backticks inside, so that nothing in the text can close it.
 * Rendered, a plan could hide words from its reviewer (an HTML comment, raw HTML, a collapsed block)
 * that its sha256 binds and the run's model reads: every surface shows a plan through this.
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
