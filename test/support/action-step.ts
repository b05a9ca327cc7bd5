/**
 * A step of the wave Action (action.yml) run as a GitHub-hosted runner runs it: its `run:` script in
 * `bash --noprofile --norc -eo pipefail` (the runner's `shell: bash`), its `env:` with every `${{ }}`
 * resolved from the inputs the workflow gives (else the Action's own defaults), the runner's temp
 * directory and the earlier steps' outputs; GITHUB_ACTION_PATH is this project's root, GITHUB_OUTPUT a
 * file read back after. An expression the stand-in runner does not know fails the test: the Action may
 * not depend on what this runner leaves out. wave is this build's bin/run.js (`steps.install.outputs.bin`).
 */
import {spawn} from 'node:child_process'
import {chmodSync, existsSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {parse} from 'yaml'

import {BIN_RUN, PROJECT_ROOT, waveEnv} from './cli.js'
import type {MessagesServer} from './messages-server.js'

interface ActionStep {
  id?: string
  name?: string
  run?: string
  env?: Record<string, string>
}

interface Action {
  inputs: Record<string, {default?: string}>
  runs: {steps: ActionStep[]}
}

const action = parse(readFileSync(path.join(PROJECT_ROOT, 'action.yml'), 'utf8')) as Action

export interface ActionJob {
  /** The runner's own directory: RUNNER_TEMP is `<runner>/temp`, the wave shim and GITHUB_OUTPUT live here. */
  runner: string
  /** The workspace (actions/checkout's). */
  checkout: string
  /** The variables the runner sets for every step (GITHUB_EVENT_NAME, GITHUB_EVENT_PATH, GITHUB_API_URL, ...). */
  env: Record<string, string>
  /** The workflow's `with:`. */
  inputs: Record<string, string>
  /** `github.token` as the runner gives it (the default of the Action's github-token input). */
  token: string
  home: string
  server?: MessagesServer
}

export interface ActionStepResult {
  code: number | null
  stdout: string
  stderr: string
  /** What the step left in $GITHUB_OUTPUT, name → value (the last write of a name wins, as on GitHub). */
  outputs: Record<string, string>
}

/** Runs the Action's step `id` for `job`. */
export async function runActionStep(id: string, job: ActionJob): Promise<ActionStepResult> {
  const step = action.runs.steps.find((s) => s.id === id)
  if (!step?.run) throw new Error(`action.yml has no run: step with id ${id}`)
  const temp = path.join(job.runner, 'temp')
  const bin = path.join(job.runner, 'wave-bin')
  if (!existsSync(bin)) {
    writeFileSync(bin, `#!/bin/sh\nexec "${process.execPath}" "${BIN_RUN}" "$@"\n`)
    chmodSync(bin, 0o755)
  }

  const outputFile = path.join(job.runner, `github-output-${id}`)
  writeFileSync(outputFile, '')
  const context = (name: string): string => {
    const [scope, ...rest] = name.split('.')
    if (scope === 'inputs') {
      const input = rest.join('.')
      if (!(input in action.inputs)) throw new Error(`action.yml names no input ${input}`)
      return job.inputs[input] ?? resolve(action.inputs[input].default ?? '')
    }
    if (name === 'runner.temp') return temp
    if (name === 'github.token') return job.token
    if (name === 'steps.install.outputs.bin') return bin
    throw new Error(`the stand-in runner does not know \${{ ${name} }}`)
  }
  const resolve = (text: string): string => text.replaceAll(/\$\{\{\s*([\w.-]+)\s*\}\}/g, (_, name: string) => context(name))
  const stepEnv = Object.fromEntries(Object.entries(step.env ?? {}).map(([name, value]) => [name, resolve(String(value))]))
  const env = waveEnv({
    env: {...job.env, GITHUB_ACTION_PATH: PROJECT_ROOT, GITHUB_OUTPUT: outputFile, RUNNER_TEMP: temp, ...stepEnv},
    home: job.home,
  })

  const ran = await new Promise<{code: number | null; stdout: string; stderr: string}>((done, fail) => {
    const child = spawn('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', step.run!], {cwd: job.checkout, env, stdio: ['ignore', 'pipe', 'pipe']})
    const stdout: Buffer[] = []
    const stderr: Buffer[] = []
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk))
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk))
    child.on('error', fail)
    child.on('close', (code) => done({code, stderr: Buffer.concat(stderr).toString('utf8'), stdout: Buffer.concat(stdout).toString('utf8')}))
  })
  const outputs = Object.fromEntries(
    readFileSync(outputFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(/=(.*)/s).slice(0, 2) as [string, string]),
  )
  return {...ran, outputs}
}
