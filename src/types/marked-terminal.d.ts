// marked-terminal 7 ships no types; this declares the part wave uses (see its README for the options).
declare module 'marked-terminal' {
  import type {MarkedExtension} from 'marked'

  type Style = (text: string) => string

  export interface TerminalRendererOptions {
    code?: Style
    blockquote?: Style
    html?: Style
    heading?: Style
    firstHeading?: Style
    hr?: Style
    listitem?: Style
    table?: Style
    paragraph?: Style
    strong?: Style
    em?: Style
    codespan?: Style
    del?: Style
    link?: Style
    href?: Style
    text?: Style
    image?: (href: string, title: string | null, text: string) => string
    unescape?: boolean
    emoji?: boolean
    width?: number
    showSectionPrefix?: boolean
    reflowText?: boolean
    tab?: number | string
    /** cli-table3's options: style.head and style.border are lists of colour names. */
    tableOptions?: {style?: {head?: string[]; border?: string[]}}
  }

  export function markedTerminal(options?: TerminalRendererOptions, highlightOptions?: Record<string, unknown>): MarkedExtension
}
