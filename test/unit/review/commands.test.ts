import {describe, expect, it} from 'vitest'

import {CommentSyntaxError, isWaveComment, parseWaveComment, planNamed, tokenize} from '../../../src/review/commands.js'

describe('tokenize', () => {
  it('splits on white space and reads quotes as a shell would, expanding nothing', () => {
    expect(tokenize('  a  b\tc ')).toEqual(['a', 'b', 'c'])
    expect(tokenize('--allow "Bash(npm test:*)" --allow \'Edit(src/**)\'')).toEqual(['--allow', 'Bash(npm test:*)', '--allow', 'Edit(src/**)'])
    expect(tokenize('"say \\"hi\\" \\\\ now"')).toEqual(['say "hi" \\ now'])
    expect(tokenize("'$(rm -rf /) `id` ${HOME}'")).toEqual(['$(rm -rf /) `id` ${HOME}'])
    expect(tokenize('$(id) ; rm -rf / && x')).toEqual(['$(id)', ';', 'rm', '-rf', '/', '&&', 'x'])
    expect(tokenize('a\\ b "" c')).toEqual(['a b', '', 'c'])
    expect(tokenize('“Bash(npm test:*)” ‘x y’')).toEqual(['Bash(npm test:*)', 'x y'])
    expect(tokenize('--mode="accept"Edits')).toEqual(['--mode=acceptEdits'])
  })

  it('refuses a quote left open', () => {
    expect(() => tokenize('--allow "Bash(npm test:*)')).toThrow(CommentSyntaxError)
    expect(() => tokenize("it's")).toThrow(/not closed/)
  })
})

describe('parseWaveComment', () => {
  it('knows a /wave comment by its first word only', () => {
    expect(isWaveComment('/wave plan x')).toBe(true)
    expect(isWaveComment('\n  /wave')).toBe(true)
    expect(isWaveComment('/waveplan x')).toBe(false)
    expect(isWaveComment('please /wave plan x')).toBe(false)
  })

  it('keeps a task, feedback or reason as written, across lines (CRLF read as LF)', () => {
    expect(parseWaveComment('/wave plan Add a flag\r\n\r\n- and docs\r\n')).toEqual({command: 'plan', task: 'Add a flag\n\n- and docs'})
    expect(parseWaveComment('/wave plan\nOn the next line')).toEqual({command: 'plan', task: 'On the next line'})
    expect(parseWaveComment('/wave request-changes brave-otter Keep `$HOME` as is;\nthanks')).toEqual({
      command: 'request-changes',
      text: 'brave-otter Keep `$HOME` as is;\nthanks',
    })
    expect(parseWaveComment('/wave reject')).toEqual({command: 'reject', text: ''})
    expect(parseWaveComment('/wave')).toEqual({command: 'help'})
  })

  it('parses approve: a plan name, --sha256, --mode and every --allow, from the first line only', () => {
    expect(
      parseWaveComment(
        `/wave approve brave-otter --sha256 ${'A'.repeat(64)} --mode=bypassPermissions --allow "Bash(npm test:*)" --allow Read(src/**)\nLGTM --mode default`,
      ),
    ).toEqual({
      allow: ['Bash(npm test:*)', 'Read(src/**)'],
      command: 'approve',
      mode: 'bypassPermissions',
      plan: 'brave-otter',
      sha256: 'a'.repeat(64),
    })
    expect(parseWaveComment('/wave approve')).toEqual({command: 'approve'})
  })

  it('refuses what it does not know, with a line saying why', () => {
    expect(() => parseWaveComment('/wave plan')).toThrow('/wave plan needs a task')
    expect(() => parseWaveComment('/wave request-changes  ')).toThrow('needs feedback')
    expect(() => parseWaveComment('/wave deploy now')).toThrow('Unknown command /wave deploy')
    expect(() => parseWaveComment('/wave approve --mode plan')).toThrow('--mode must be one of default, acceptEdits, bypassPermissions')
    expect(() => parseWaveComment('/wave approve --mode')).toThrow('--mode needs a value')
    expect(() => parseWaveComment('/wave approve --force')).toThrow('Unknown option --force')
    expect(() => parseWaveComment('/wave approve a b')).toThrow('takes one plan name')
    expect(() => parseWaveComment('/wave approve --sha256 abc')).toThrow('at least 12 hex digits')
    expect(() => parseWaveComment('/wave approve --allow "Bash(npm test"')).toThrow(/--allow Bash\(npm test: /)
    expect(() => parseWaveComment('/wave approve --sandbox-network-allow https://evil.example/x')).toThrow('is not a host name')
    expect(() => parseWaveComment('/wave resume a b')).toThrow('/wave resume takes at most a plan name')
    expect(() => parseWaveComment('/wave resume --force')).toThrow('/wave resume takes at most a plan name')
  })

  it('parses --sandbox-network-allow (repeatable, each a host) and /wave resume [<plan>]', () => {
    expect(parseWaveComment('/wave approve brave-otter --sandbox-network-allow registry.npmjs.org --sandbox-network-allow=127.0.0.1:4873')).toEqual({
      command: 'approve',
      networkAllow: ['registry.npmjs.org', '127.0.0.1:4873'],
      plan: 'brave-otter',
    })
    // Off by default: an approval without the option names no host.
    expect(parseWaveComment('/wave approve')).toEqual({command: 'approve'})
    expect(parseWaveComment('/wave resume')).toEqual({command: 'resume', plan: undefined})
    expect(parseWaveComment('/wave resume brave-otter\nthanks')).toEqual({command: 'resume', plan: 'brave-otter'})
  })
})

describe('planNamed', () => {
  it('takes the first word as the plan only when the thread has a plan of that name', () => {
    expect(planNamed('brave-otter Call it goodbye', ['brave-otter'])).toEqual({plan: 'brave-otter', rest: 'Call it goodbye'})
    expect(planNamed('brave-otter', ['brave-otter'])).toEqual({plan: 'brave-otter', rest: ''})
    expect(planNamed('Call it goodbye', ['brave-otter'])).toEqual({rest: 'Call it goodbye'})
  })
})
