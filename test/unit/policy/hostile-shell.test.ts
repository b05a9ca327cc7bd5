/**
 * Issue #11: hostile commands under allow rules, each run through the real dispatcher in acceptEdits
 * mode. Each would create the marker file `pwned` if bash ran it, which a control run without rules
 * (bypassPermissions) proves first; under the allow rule the marker must not appear. The verdict is
 * the file system's, not the matcher's.
 */
import {execFileSync} from 'node:child_process'
import {existsSync, rmSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'

import {useWorkspaces} from '../tools/context.js'
import {callTool} from './dispatcher.js'

const workspace = useWorkspaces()

const ECHO = 'Bash(echo:*)'
const NPM = 'Bash(npm test:*)'
const GIT = 'Bash(git status)'
const CAT = 'Bash(cat:*)'

/** `@ROOT@` stands for the workspace's absolute path. */
const HOSTILE: Array<[command: string, rule: string]> = [
  // compound commands: a second command beside the allowed one
  ['echo hi; touch pwned', ECHO],
  ['echo hi;touch pwned', ECHO],
  ['echo hi && touch pwned', ECHO],
  ['echo hi >&3 || touch pwned', ECHO],
  ['echo hi | touch pwned', ECHO],
  ['echo hi |& touch pwned', ECHO],
  ['echo hi & touch pwned', ECHO],
  ['echo hi\ntouch pwned', ECHO],
  ['echo hi\r\ntouch pwned', ECHO],
  ['echo hi && ! touch pwned', ECHO],
  ['echo hi; (touch pwned)', ECHO],
  ['echo hi && { echo x; touch pwned; }', ECHO],
  ['npm test; touch pwned', NPM],
  ['npm test && touch pwned', NPM],
  ['git status; touch pwned', GIT],
  // command substitution, in every spelling
  ['echo $(touch pwned)', ECHO],
  ['echo `touch pwned`', ECHO],
  ['echo "$(touch pwned)"', ECHO],
  ['echo "`touch pwned`"', ECHO],
  ['echo a$(touch pwned)b', ECHO],
  ['echo \'a\'"$(touch pwned)"', ECHO],
  ['npm test -- "$(touch pwned)"', NPM],
  // parameter expansion that evaluates: assign, then an arithmetic offset, prompt or indirect expansion
  ["echo ${x:=$'a[\\x24(touch pwned)]'} ${x:x}", ECHO],
  ["echo ${x:=$'\\x24(touch pwned)'}${x@P}", ECHO],
  ["echo ${x:=$'\\x60touch pwned\\x60'}${x@P}", ECHO],
  ["echo ${x:=$'a[\\x24(touch pwned)]'}${!x}", ECHO],
  ["echo ${x:=$'a[\\x24(touch pwned)]'} $[x]", ECHO],
  ["echo ${x:=$'a[\\x24(touch pwned)]'} $((x))", ECHO],
  ["npm test ${x:=$'a[\\x24(touch pwned)]'} ${x:x}", NPM],
  ['echo ${x:-$(touch pwned)}', ECHO],
  ['echo ${x=$(touch pwned)}', ECHO],
  ['echo ${x:?$(touch pwned)}', ECHO],
  ['echo ${PATH:+$(touch pwned)}', ECHO],
  ['echo ${PATH/bin/$(touch pwned)}', ECHO],
  ['echo ${a[$(touch pwned)]}', ECHO],
  ['echo "${x:=$(touch pwned)}"', ECHO],
  // arithmetic, old and new
  ['echo $(( $(touch pwned)1 ))', ECHO],
  ['echo $[$(touch pwned)1]', ECHO],
  // ANSI-C and locale quoting
  [String.raw`echo hi; $'\x74ouch' pwned`, ECHO],
  ['echo $"$(touch pwned)"', ECHO],
  // process substitution
  ['cat <(touch pwned)', CAT],
  ['echo hi > >(touch pwned)', ECHO],
  // expansions around a substitution: brace, glob, tilde
  ['echo {a,b}$(touch pwned)', ECHO],
  ['echo *$(touch pwned)', ECHO],
  ['echo ~$(touch pwned)', ECHO],
  // here-documents and here-strings expand their text
  ['echo hi <<EOF\n$(touch pwned)\nEOF', ECHO],
  ['echo hi <<< $(touch pwned)', ECHO],
  ['echo hi <<< "$(touch pwned)"', ECHO],
  ['cat <<EOF; touch pwned\nx\nEOF', CAT],
  // redirections that create the file themselves
  ['echo hi > pwned', ECHO],
  ['echo hi >> pwned', ECHO],
  ['echo hi &> pwned', ECHO],
  ['echo hi >& pwned', ECHO],
  ['echo hi 2> pwned', ECHO],
  ['echo hi >| pwned', ECHO],
  ['echo hi <> pwned', ECHO],
  ['echo hi 2>&1 > "pwned"', ECHO],
  ['> pwned echo hi', ECHO],
  ['echo hi {fd}> pwned', ECHO],
  ['npm test > pwned', NPM],
  ['git status > pwned', GIT],
  // environment prefixes and assignments
  ['GIT_TRACE=@ROOT@/pwned git status', GIT],
  ["GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch pwned' git status", GIT],
  ['x=$(touch pwned) echo hi', ECHO],
  ['export X=$(touch pwned)', ECHO],
  ['echo hi; x=touch; $x pwned', ECHO],
  // line continuations, as bash joins them
  ['echo hi; tou\\\nch pwned', ECHO],
  ['echo $\\\n(touch pwned)', ECHO],
  ['echo hi &\\\n& touch pwned', ECHO],
  ['git status \\\n; touch pwned', GIT],
  // comments end at the line's end, whatever they hold
  ['echo hi # \\\ntouch pwned', ECHO],
  ['echo hi # a comment\ntouch pwned', ECHO],
  // quoting that spells the other command
  ['echo hi; "touch" pwned', ECHO],
  ["echo hi && 'touch' pwned", ECHO],
  [String.raw`echo hi; t\ouch pwned`, ECHO],
  ['e"ch"o hi; touch pwned', ECHO],
  // functions, control flow, evaluation, and other shells
  ['f() { touch pwned; }; echo hi; f', ECHO],
  ['echo hi; if true; then touch pwned; fi', ECHO],
  ['echo hi; for i in 1; do touch pwned; done', ECHO],
  ['echo hi; while true; do touch pwned; break; done', ECHO],
  ['echo hi; case x in x) touch pwned;; esac', ECHO],
  ['echo hi; [[ $(touch pwned) ]]', ECHO],
  ["echo hi; eval 'touch pwned'", ECHO],
  ["echo hi; bash -c 'touch pwned'", ECHO],
  ['echo hi; exec touch pwned', ECHO],
  ['echo hi; time touch pwned', ECHO],
  // builtins that evaluate literal words: an array subscript in a variable name is arithmetic
  ["test -v 'a[$(touch pwned)]'", 'Bash(test:*)'],
  ["'[' -v 'a[$(touch pwned)]' ']'", 'Bash([:*)'],
  ["printf -v 'a[$(touch pwned)]' x", 'Bash(printf:*)'],
  ["read 'a[$(touch pwned)]'", 'Bash(read:*)'],
  ["let 'a[$(touch pwned)]'", 'Bash(let:*)'],
  ["trap 'touch pwned' EXIT", 'Bash(trap:*)'],
]

/** Allowed commands that must still run, and what they print. */
const LEGITIMATE: Array<[command: string, rule: string, output: string | RegExp]> = [
  ['echo "a|b"', ECHO, 'a|b'],
  ["echo 'x; touch pwned'", ECHO, 'x; touch pwned'],
  ['echo "a && touch pwned" \'$(touch pwned)\'', ECHO, 'a && touch pwned $(touch pwned)'],
  [String.raw`echo a\ b "c d" \$HOME`, ECHO, 'a b c d $HOME'],
  ['echo one && echo two', ECHO, 'one\ntwo'],
  ['echo hidden >/dev/null 2>&1', ECHO, '(no output)'],
  ['echo to-stderr >&2', ECHO, 'to-stderr'],
  ['echo one \\\n  two', ECHO, 'one two'],
  ['git status', GIT, /On branch|No commits yet/],
  ['npm test -- -t "a|b"', NPM, /ran -t a\|b/],
]

async function hostileWorkspace(): Promise<string> {
  const root = await workspace({'package.json': JSON.stringify({name: 'fixture', scripts: {test: 'echo ran'}, version: '1.0.0'})})
  execFileSync('git', ['init', '-q', root])
  return root
}

/** The marker, waited for a moment: a process substitution may finish after bash does. */
async function markerAppears(marker: string): Promise<boolean> {
  for (let waited = 0; waited < 2000; waited += 50) {
    if (existsSync(marker)) return true
    await new Promise((resolve) => setTimeout(resolve, 50))
  }

  return false
}

describe('hostile commands under allow rules', () => {
  it('has at least 60 of them', () => {
    expect(HOSTILE.length).toBeGreaterThanOrEqual(60)
  })

  it.each(HOSTILE)('%j under %s creates nothing', async (template, rule) => {
    const root = await hostileWorkspace()
    const command = template.replaceAll('@ROOT@', root)
    const marker = path.join(root, 'pwned')

    // Control: unguarded, the command does create the marker, so its absence below means something.
    // Unsandboxed, since the sandbox ends a process substitution's background child with the command.
    const control = await callTool(root, 'bypassPermissions', {}, 'Bash', {command}, {enabled: false, network: false})
    expect(control.decision?.decision).toBe('allow')
    expect(await markerAppears(marker), `control run of ${JSON.stringify(command)}: ${control.content}`).toBe(true)
    rmSync(marker, {force: true, recursive: true})

    const outcome = await callTool(root, 'acceptEdits', {allow: [rule]}, 'Bash', {command})
    expect(outcome.isError).toBe(true)
    expect(outcome.decision?.decision).toBe('deny')
    expect(outcome.content).toMatch(/^Permission denied: /)
    expect(existsSync(marker)).toBe(false)
  })
})

describe('plain commands under allow rules', () => {
  it.each(LEGITIMATE)('%j under %s runs', async (command, rule, output) => {
    const root = await hostileWorkspace()
    const outcome = await callTool(root, 'acceptEdits', {allow: [rule]}, 'Bash', {command})
    expect(outcome.decision?.decision).toBe('allow')
    expect(outcome.isError).toBe(false)
    if (typeof output === 'string') expect(outcome.content).toBe(output)
    else expect(outcome.content).toMatch(output)
    expect(existsSync(path.join(root, 'pwned'))).toBe(false)
  })
})
