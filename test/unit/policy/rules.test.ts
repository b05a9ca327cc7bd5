/**
 * Issue #26: Bash rules as people write them (Claude Code's documented spellings), decided by the one
 * policy function on the command as the shell grammar reads it. Each table row is a rule set, a
 * command and the decision; deny rows are paired with the allowed command they must not catch.
 */
import {describe, expect, it} from 'vitest'

import {decide, parseRule, parseRules, type PolicyContext, ruleSchema} from '../../../src/policy/policy.js'
import {analyseShell} from '../../../src/policy/shell.js'
import {parseSettings} from '../../../src/config/settings.js'

const BASH = {access: 'execute', name: 'Bash'} as const

async function decision(command: string, allow: string[], deny: string[] = [], mode: PolicyContext['mode'] = 'acceptEdits') {
  const ctx: PolicyContext = {headless: true, mode, rules: parseRules(allow, deny), workspaceRoot: '/w'}
  return decide(ctx, {input: {command}, shell: await analyseShell(command), tool: BASH})
}

const allowed = async (command: string, allow: string[], deny: string[] = []) => (await decision(command, allow, deny)).decision === 'allow'
/** Denied by a deny rule even where bypassPermissions allows every command. */
const denied = async (command: string, deny: string[]) => (await decision(command, [], deny, 'bypassPermissions')).decision === 'deny'

describe('a line of several commands', () => {
  it.each<[string, string[], boolean]>([
    ['echo hi && ls', ['Bash(echo:*)', 'Bash(ls:*)'], true],
    ['echo hi; ls -la', ['Bash(echo:*)', 'Bash(ls:*)'], true],
    ['npm test | tee out.log', ['Bash(npm test:*)', 'Bash(tee:*)'], true],
    ['git status && git diff --stat', ['Bash(git status)', 'Bash(git diff:*)'], true],
    ['(echo a) || { ls; }', ['Bash(echo:*)', 'Bash(ls:*)'], true],
    // every command needs a rule
    ['echo hi && rm -rf build', ['Bash(echo:*)', 'Bash(ls:*)'], false],
    ['echo hi && ls && touch x', ['Bash(echo:*)', 'Bash(ls:*)'], false],
    // each still literal words
    ['echo $(id) && ls', ['Bash(echo:*)', 'Bash(ls:*)'], false],
    ['echo hi > out && ls', ['Bash(echo:*)', 'Bash(ls:*)'], false],
    // a deny rule beats the allow rules of the other commands
    ['echo hi && ls', ['Bash(echo:*)', 'Bash(ls:*)', 'DENY:Bash(ls:*)'], false],
  ])('%j under %j: allowed %s', async (command, rules, expected) => {
    const allow = rules.filter((rule) => !rule.startsWith('DENY:'))
    const deny = rules.filter((rule) => rule.startsWith('DENY:')).map((rule) => rule.slice(5))
    expect(await allowed(command, allow, deny)).toBe(expected)
  })

  it('says which rules allowed it', async () => {
    expect((await decision('echo hi && ls', ['Bash(echo:*)', 'Bash(ls:*)'])).reason).toBe('Allowed by the rules Bash(echo:*) and Bash(ls:*).')
  })

  it('suggests a rule for every command of a refused line', async () => {
    const refused = await decision('echo hi && ls -la | wc -l', ['Bash(wc:*)'])
    expect(refused.decision).toBe('deny')
    expect(refused.reason).toContain('Bash(echo hi:*), Bash(ls -la:*) and Bash(wc -l:*) (one for each command)')
    // A suggested rule, given, allows the line.
    expect(await allowed('echo hi && ls -la | wc -l', ['Bash(echo hi:*)', 'Bash(ls -la:*)', 'Bash(wc -l:*)'])).toBe(true)
  })

  it('suggests quoted words where a word holds a blank, and the suggestion reads back', async () => {
    const refused = await decision('git commit -m "fix bug"', [])
    expect(refused.reason).toContain('Bash(git commit:*)')
    const spaced = await decision('"my tool" run', [])
    expect(spaced.reason).toContain("Bash('my tool' run:*)")
    expect(await allowed('"my tool" run --fast', ["Bash('my tool' run:*)"])).toBe(true)
  })
})

describe('quoted words in a rule', () => {
  it.each<[string, string, boolean]>([
    ['Bash(git commit -m "fix":*)', 'git commit -m "fix"', true],
    ['Bash(git commit -m "fix":*)', 'git commit -m fix', true],
    ['Bash(git commit -m "fix":*)', "git commit -m 'fix' --amend", true],
    ['Bash(git commit -m "fix bug")', 'git commit -m "fix bug"', true],
    ['Bash(git commit -m "fix bug")', 'git commit -m fix bug', false],
    ["Bash(echo 'a b' c)", 'echo "a b" c', true],
    ["Bash(echo 'a b' c)", 'echo a b c', false],
    ['Bash(echo "*")', 'echo "*"', true],
    ['Bash(echo "*")', 'echo hi', false],
    [String.raw`Bash(echo a\ b)`, 'echo "a b"', true],
  ])('%s vs %j: allowed %s', async (rule, command, expected) => {
    expect(await allowed(command, [rule])).toBe(expected)
  })

  it('as a deny rule, matches the words after quote removal', async () => {
    expect(await denied('git commit -m "fix bug"', ['Bash(git commit -m "fix bug")'])).toBe(true)
    expect(await denied('git commit -m "other"', ['Bash(git commit -m "fix bug")'])).toBe(false)
  })
})

describe("Claude Code's wildcard spelling", () => {
  // [rule, command, matches]: each row is checked as an allow rule and as a deny rule.
  const rows: Array<[string, string, boolean]> = [
    ['Bash(npm run test *)', 'npm run test', true],
    ['Bash(npm run test *)', 'npm run test --watch', true],
    ['Bash(npm run test *)', 'npm run test -- -t "a b"', true],
    ['Bash(npm run test *)', 'npm run testing', false],
    ['Bash(npm run test *)', 'npm run lint', false],
    ['Bash(rm *)', 'rm -rf build', true],
    ['Bash(rm *)', 'rm', true],
    ['Bash(rm *)', 'rmdir build', false],
    ['Bash(ls*)', 'lsof -i', true],
    ['Bash(ls*)', 'ls -la', true],
    ['Bash(*gcloud*)', 'gcloud compute instances list', true],
    ['Bash(*gcloud*)', 'echo gcloud', true],
    ['Bash(*gcloud*)', 'npx gcloud-cli', true],
    ['Bash(*gcloud*)', 'gsutil ls', false],
    ['Bash(git checkout -- *)', 'git checkout -- src/app.ts', true],
    ['Bash(git checkout -- *)', 'git checkout --', true],
    ['Bash(git checkout -- *)', 'git checkout main', false],
    ['Bash(git * main)', 'git push origin main', true],
    ['Bash(git * main)', 'git push origin dev', false],
    ['Bash(*)', 'anything at all', true],
  ]

  it.each(rows)('allow %s vs %j: %s', async (rule, command, expected) => {
    expect(await allowed(command, [rule])).toBe(expected)
  })

  it.each(rows)('deny %s vs %j: %s', async (rule, command, expected) => {
    expect(await denied(command, [rule])).toBe(expected)
  })

  it('a wildcard deny rule sees commands behind wrappers and in compound lines', async () => {
    expect(await denied('ls && sudo rm -rf build', ['Bash(rm *)'])).toBe(true)
    expect(await denied("bash -c 'gcloud auth print-access-token'", ['Bash(*gcloud*)'])).toBe(true)
    expect(await denied('ls && /usr/bin/rm -rf x', ['Bash(rm *)'])).toBe(true)
  })
})

describe('deny rules and commands fed by their input', () => {
  it.each<[string, string, boolean]>([
    ['echo -rf build | xargs rm', 'Bash(rm -rf:*)', true],
    ['echo build | xargs rm', 'Bash(rm -rf:*)', true],
    ['printf "%s\\n" -rf | xargs -n1 rm', 'Bash(rm -rf:*)', true],
    ['find . -name "*.o" | xargs -I{} rm {}', 'Bash(rm -rf:*)', true],
    ['echo x | xargs sh -c', 'Bash(rm -rf:*)', true],
    ['echo x | xargs -I{} bash -c {}', 'Bash(git push:*)', true],
    ['ls | parallel rm', 'Bash(rm -rf:*)', true],
    ['echo push | xargs git', 'Bash(git push:*)', true],
    ['echo rm | xargs git', 'Bash(git push:*)', true],
    // the words written decide where they already differ from the rule
    ['echo -rf | xargs ls', 'Bash(rm -rf:*)', false],
    ['echo x | xargs git status', 'Bash(git push:*)', false],
    ['echo x | xargs rm -i', 'Bash(rm -rf:*)', false],
  ])('%j under deny %s: denied %s', async (command, rule, expected) => {
    expect(await denied(command, [rule])).toBe(expected)
  })
})

describe('command -v', () => {
  it('is not read as running the command it names', async () => {
    expect(await denied('command -v bash', ['Bash(rm:*)'])).toBe(false)
    expect(await denied('command -v rm', ['Bash(rm:*)'])).toBe(false)
    expect(await denied('command -V npm && npm test', ['Bash(rm:*)'])).toBe(false)
    expect(await allowed('command -v bash', ['Bash(command -v:*)'], ['Bash(rm:*)'])).toBe(true)
  })

  it('command without -v still runs its command', async () => {
    expect(await denied('command rm x', ['Bash(rm:*)'])).toBe(true)
    expect(await denied('command -p rm x', ['Bash(rm:*)'])).toBe(true)
  })
})

describe('a rule wave cannot read', () => {
  const unreadable: Array<[string, RegExp]> = [
    ['Bash(git commit -m "fix)', /unbalanced " quote/],
    ["Bash(echo 'a)", /unbalanced ' quote/],
    ['Bash(npm:* test)', /:\* may only end the rule/],
    ['Bash(npm test && npm run lint)', /shell syntax \("&"\).*one rule per command/],
    ['Bash(echo $HOME)', /shell syntax \("\$"\)/],
    ['Bash(ls | wc)', /shell syntax/],
    ['Bash(echo a\\)', /backslash at the end/],
    ['WebFetch(https://example.com)', /a WebFetch rule names a host, as WebFetch\(domain:example\.com\)/],
  ]

  it.each(unreadable)('is refused by name: %s', (rule, why) => {
    expect(() => parseRule(rule)).toThrow(`Invalid permission rule "${rule}"`)
    expect(() => parseRule(rule)).toThrow(why)
  })

  it('is refused in a settings file, naming the file and the rule (exit 2)', () => {
    for (const key of ['allow', 'deny']) {
      const text = JSON.stringify({permissions: {[key]: ['Bash(npm test:*)', 'Bash(npm:* test)']}})
      expect(() => parseSettings(text, '/s.json', 'user')).toThrow(
        `Invalid settings file /s.json: permissions.${key}[1]: Invalid permission rule "Bash(npm:* test)"`,
      )
      try {
        parseSettings(text, '/s.json', 'user')
      } catch (error) {
        expect((error as {exitCode?: number}).exitCode).toBe(2)
      }
    }
  })

  it('is refused by the schema every source uses (flags, approval records, comments)', () => {
    const rejected = ruleSchema.safeParse("Bash(echo 'a)")
    expect(rejected.success).toBe(false)
    expect(rejected.error?.issues[0].message).toMatch(/^Invalid permission rule "Bash\(echo 'a\)": wave cannot read an unbalanced ' quote\.$/)
  })

  it('while every spelling in the tables above loads', () => {
    for (const rule of [
      'Bash(npm run test *)',
      'Bash(*gcloud*)',
      'Bash(git checkout -- *)',
      'Bash(git commit -m "fix bug")',
      'Bash(rm:*)',
      'Bash(:*)',
      'Bash(*)',
      'Bash(docker run img:tag)',
    ]) {
      expect(() => parseRule(rule), rule).not.toThrow()
    }
  })
})
