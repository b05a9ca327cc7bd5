/**
 * A plan's Markdown as terminal text, for the review screen of `wave approve --interactive`.
 *
 * marked parses (CommonMark + GFM) and marked-terminal renders: headings, emphasis, code blocks (with
 * syntax colours, which it adds only when stdout takes colour), tables. A few renderers of wave's own take the place of marked-terminal's
 * where it cannot do what a review needs (marked-terminal 7.3 with marked 18):
 * - lists: marked-terminal prints a tight item's inline Markdown raw (`**bold**`, `` `code` ``; its
 *   issues #304 and #371), prints task boxes twice, numbers a bullet list nested in a numbered one, and
 *   does not wrap items;
 * - paragraphs and quotes: its reflow wraps at one fixed width, so text in a list or a quote overflows
 *   the screen by its indentation; here each is wrapped to the room it has;
 * - links: always `text (url)`, never an OSC 8 hyperlink, whose target a reviewer could not see;
 * - code spans and entities: its placeholder for `:` and its entity decoding work at the paragraph
 *   level, which these renderers replace; entities are decoded in text only (a code span keeps `&amp;`);
 * - HTML: a block stands apart from the next (marked-terminal runs them together); inline tags are
 *   dropped (what they wrap is kept), `<br>` breaks the line;
 * - rules are sized to the width, not to stdout.
 * Control characters are removed before parsing, so a plan cannot drive the terminal; without colour,
 * whatever the libraries coloured on their own (highlighting, table borders) is made plain.
 *
 * marked-terminal (with highlight.js) takes a few hundred milliseconds to load, so it is loaded on the
 * first render only: no command but `wave approve --interactive` ever loads it.
 */
import type {MarkedExtension, Token, Tokens} from 'marked'

interface MarkdownRenderOptions {
  color: boolean
  /** Wrap width in columns. */
  width: number
}

const ANSI_SEQUENCE = /\u001B\[[0-?]*[ -/]*[@-~]/g
// Control characters a plan must not smuggle to the terminal (escape sequences, bells, C1 codes).
const CONTROL = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/g

/** Text without the control characters that could drive the terminal. */
export const withoutControls = (text: string) => text.replaceAll(CONTROL, '')

/** Visible width of a line: ANSI sequences take no room. */
export const visibleLength = (text: string) => [...text.replaceAll(ANSI_SEQUENCE, '')].length

/** Renders Markdown as terminal text, ending with one newline. */
export async function renderMarkdown(markdown: string, options: MarkdownRenderOptions): Promise<string> {
  const [{Marked}, {markedTerminal}] = await Promise.all([import('marked'), import('marked-terminal')])
  const style = styles(options.color)
  const marked = new Marked(
    markedTerminal({
      ...style.library,
      emoji: false,
      image: (href, _title, text) => `[image: ${text || href}]`,
      reflowText: false,
      showSectionPrefix: false,
      tab: 4,
      tableOptions: {style: options.color ? {border: ['grey'], head: ['bold']} : {border: [], head: []}},
      unescape: false,
      width: options.width,
    }),
    reviewRenderers(options.width, style),
    {gfm: true},
  )
  const text = marked.parse(withoutControls(markdown.replaceAll('\r\n', '\n')), {async: false})
  const out = text.replace(/\n{3,}/g, '\n\n').trimEnd() + '\n'
  return options.color ? out : out.replaceAll(ANSI_SEQUENCE, '')
}

interface Styles {
  /** The styles marked-terminal applies. */
  library: Record<
    'blockquote' | 'code' | 'codespan' | 'del' | 'em' | 'firstHeading' | 'heading' | 'hr' | 'href' | 'html' | 'link' | 'strong',
    (text: string) => string
  >
  marker(text: string): string
  bar(text: string): string
}

const sgr = (open: number, close: number) => (text: string) => `\u001B[${open}m${text}\u001B[${close}m`
const ANSI = {
  bold: sgr(1, 22),
  cyan: sgr(36, 39),
  dim: sgr(2, 22),
  green: sgr(32, 39),
  italic: sgr(3, 23),
  strike: sgr(9, 29),
  underline: sgr(4, 24),
}

function styles(color: boolean): Styles {
  if (color) {
    return {
      bar: ANSI.dim,
      library: {
        blockquote: ANSI.italic,
        code: ANSI.green,
        codespan: ANSI.cyan,
        del: ANSI.strike,
        em: ANSI.italic,
        firstHeading: (text) => ANSI.bold(ANSI.underline(text)),
        heading: (text) => ANSI.bold(ANSI.cyan(text)),
        hr: ANSI.dim,
        href: ANSI.dim,
        html: ANSI.dim,
        link: ANSI.underline,
        strong: ANSI.bold,
      },
      marker: ANSI.bold,
    }
  }

  const plain = (text: string) => text
  // Without colour a heading is underlined, and a code span keeps its backticks: nothing else marks them.
  const underlined = (rule: string) => (text: string) => `${text}\n${rule.repeat(Math.max(...text.split('\n').map(visibleLength)))}`
  return {
    bar: plain,
    library: {
      blockquote: plain,
      code: plain,
      codespan: (text) => `\`${text}\``,
      del: (text) => `~${text}~`,
      em: plain,
      firstHeading: underlined('='),
      heading: underlined('-'),
      hr: plain,
      href: plain,
      html: plain,
      link: plain,
      strong: plain,
    },
    marker: plain,
  }
}

/** The renderers that replace marked-terminal's (see the top of this file for why). */
function reviewRenderers(width: number, style: Styles): MarkedExtension {
  const {library} = style
  // Columns taken by the lists and quotes the text being rendered is in; rendering is synchronous.
  let inset = 0
  const section = (text: string) => `${text}\n\n`
  const wrapped = (text: string) => wrap(text, Math.max(10, width - inset)).join('\n')

  return {
    renderer: {
      blockquote(token) {
        inset += 2
        const body = this.parser.parse(token.tokens).trim()
        inset -= 2
        return section(
          body
            .split('\n')
            .map((line) => style.bar('│ ') + (line ? library.blockquote(line) : line))
            .join('\n'),
        )
      },
      codespan: (token) => library.codespan(token.text),
      hr: () => section(library.hr('─'.repeat(Math.min(width, 40)))),
      html(token) {
        if (token.block) return section(library.html(token.text.trimEnd()))
        if (/^<br\s*\/?>$/i.test(token.text)) return '\n'
        return /^<\/?[a-z][^>]*>$/i.test(token.text) ? '' : decodeEntities(token.text)
      },
      link(token) {
        const text = this.parser.parseInline(token.tokens)
        const href = token.href.replace(/^mailto:/, '')
        const shown = library.link(text)
        return text.replaceAll(ANSI_SEQUENCE, '') === href ? shown : `${shown} ${library.href(`(${href})`)}`
      },
      list(token) {
        const start = typeof token.start === 'number' ? token.start : 1
        const markerWidth = token.ordered ? `${start + token.items.length - 1}.`.length : 1
        const lines: string[] = []
        for (const [i, item] of token.items.entries()) {
          let marker = (token.ordered ? `${start + i}.` : '•').padEnd(markerWidth) + ' '
          if (item.task) marker += item.checked ? '[x] ' : '[ ] '
          inset += marker.length
          const blocks = item.tokens
            .filter((child) => child.type !== 'checkbox')
            .map((child) => (child.type === 'text' ? wrapped(inlineText(this.parser, child as Tokens.Text)) : this.parser.parse([child]).trimEnd()))
            .filter(Boolean)
          inset -= marker.length
          const [first = '', ...rest] = blocks.join(item.loose ? '\n\n' : '\n').split('\n')
          const indent = ' '.repeat(marker.length)
          lines.push(style.marker(marker) + first, ...rest.map((line) => (line ? indent + line : line)))
          if (item.loose && i < token.items.length - 1) lines.push('')
        }

        return section(lines.join('\n'))
      },
      paragraph(token) {
        return section(wrapped(this.parser.parseInline(token.tokens)))
      },
      text(token) {
        return inlineText(this.parser, token as Tokens.Text)
      },
    },
  }
}

/** A text token's content: its inline tokens rendered (marked-terminal prints them raw), else its text. */
function inlineText(parser: {parseInline(tokens: Token[]): string}, token: Tokens.Text | Tokens.Escape): string {
  if ('tokens' in token && token.tokens) return parser.parseInline(token.tokens)
  // Escaped text was rendered already (marked joins a list item's texts into one that way).
  return 'escaped' in token && token.escaped ? token.text : decodeEntities(token.text)
}

const ENTITIES: Record<string, string> = {amp: '&', apos: "'", gt: '>', lt: '<', nbsp: ' ', quot: '"'}
const decodeEntities = (text: string) =>
  text.replaceAll(/&(#x[\da-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? Number.parseInt(name.slice(2), 16) : Number.parseInt(name.slice(1), 10)
      return code > 31 && code < 0x11_0000 && !(code >= 0x7f && code <= 0x9f) ? String.fromCodePoint(code) : whole
    }

    return ENTITIES[name.toLowerCase()] ?? whole
  })

/** Word-wraps text holding ANSI sequences to `width` columns; its own line breaks are kept. */
function wrap(text: string, width: number): string[] {
  const out: string[] = []
  for (const paragraph of text.split('\n')) {
    let words: string[] = []
    let length = 0
    for (const word of paragraph.split(/ +/)) {
      if (!word) continue
      const wordLength = visibleLength(word)
      if (words.length > 0 && length + 1 + wordLength > width) {
        out.push(words.join(' '))
        words = [word]
        length = wordLength
      } else {
        length += (words.length > 0 ? 1 : 0) + wordLength
        words.push(word)
      }
    }

    out.push(words.join(' '))
  }

  return out
}
