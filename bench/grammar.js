/** The shell grammar's CPU: wave's load of it (Liftoff alone) against V8's defaults. Run by bench/run.js (`npm run bench -- --only=grammar`). */
import {execFileSync} from 'node:child_process'
import path from 'node:path'

import {heading, recordAgainstDefaults} from './lib/harness.js'
import {PROJECT_ROOT} from './lib/sandbox.js'

/** Commands as a session's Bash calls and checks give them, each analysed by the policy. */
const COMMANDS = [
  'git status',
  'npm test -- --run',
  'ls -la src | grep -v test > list.txt',
  'for f in src/*.ts; do wc -l "$f"; done',
  'cd pkg && npx tsc --noEmit',
]

/**
 * One process: loads the grammar, analyses the commands, then stays alive as a session does after its first
 * Bash call, so that what V8 compiles on background threads is counted; prints the process's CPU (all its
 * threads) in milliseconds.
 */
const child = (loader) => `
  const commands = ${JSON.stringify(COMMANDS)}
  const analyse = await (${loader})()
  for (let round = 0; round < 20; round++) for (const command of commands) await analyse(command)
  await new Promise((resolve) => setTimeout(resolve, 2000))
  const {user, system} = process.cpuUsage()
  console.log((user + system) / 1000)
`

/** wave's policy module: the grammar compiled by Liftoff alone (src/policy/shell.ts). */
const WAVE = `async () => {
  const {analyseShell} = await import(${JSON.stringify(path.join(PROJECT_ROOT, 'dist', 'policy', 'shell.js'))})
  return analyseShell
}`

/** The same grammar and runtime loaded with V8's defaults, parsing the same commands. */
const DEFAULTS = `async () => {
  const {createRequire} = await import('node:module')
  const require = createRequire(${JSON.stringify(path.join(PROJECT_ROOT, 'package.json'))})
  const {Language, Parser} = await import(require.resolve('web-tree-sitter'))
  await Parser.init()
  const parser = new Parser()
  parser.setLanguage(await Language.load(require.resolve('tree-sitter-bash/tree-sitter-bash.wasm')))
  return async (command) => parser.parse(command)
}`

const cpuOf = (loader) => Number(execFileSync(process.execPath, ['--input-type=module', '-e', child(loader)], {encoding: 'utf8'}).trim())

async function grammarCpu() {
  heading("13. The shell grammar's CPU (a process that analyses commands, as a session with Bash does)")
  await recordAgainstDefaults({
    factor: 0.5,
    figure: 'process CPU, 100 commands analysed',
    measure: (wave) => cpuOf(wave ? WAVE : DEFAULTS),
    note: "all threads, the process staying 2 s after: V8's defaults recompile the grammar's lexer by TurboFan on background threads",
    section: 'grammar',
  })
}

/** 13. The shell grammar's CPU. */
export const title = "13. The shell grammar's CPU"
export const run = grammarCpu
