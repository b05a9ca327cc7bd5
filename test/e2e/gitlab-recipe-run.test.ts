/**
 * The GitLab recipe's wave:run job (examples/gitlab-ci/wave.gitlab-ci.yml, its `.wave` script) run as a
 * runner runs it, in bash with errexit and pipefail, against the GitLab stand-in: a refusal is an answer.
 * A typo gets its reply in the thread and ends the job green, and the units' child pipeline wave:units
 * triggers next is one job that runs and passes (never a manual one, which GitLab counts as skipped and a
 * `strategy: depend` trigger as failed); WAVE_FAIL_ON_REFUSAL=true (the control) turns the same reply red.
 */
import {spawn} from 'node:child_process'
import {chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'
import {parse} from 'yaml'

import {BIN_RUN, PROJECT_ROOT, type Sandbox, waveEnv} from '../support/cli.js'
import {freshRunner, GITLAB_TOKEN, gitlabJobEnv, MR, noteEvent, planTurns, useGitLabForge} from '../support/forge-fixture.js'
import type {GitLabServer} from '../support/gitlab-server.js'
import type {MessagesServer} from '../support/messages-server.js'

interface Job {
  extends?: string
  before_script?: unknown[]
  script?: string[]
  variables?: Record<string, string>
}
const recipe = parse(readFileSync(path.join(PROJECT_ROOT, 'examples/gitlab-ci/wave.gitlab-ci.yml'), 'utf8')) as Record<string, Job> & {
  variables: Record<string, string>
}

let sandbox: Sandbox
let server: MessagesServer
let gitlab: GitLabServer
let remote: string
let jobs = 0
useGitLabForge({members: {alice: 30}}, (made) => {
  ;({forge: gitlab, remote, sandbox, server} = made)
})

/**
 * wave:run's script for one note on !7: its exit code, output, and the units' child pipeline it left;
 * with `install`, the before_script's install of the project's dependencies first, in the same shell.
 */
async function waveRun(body: string, variables: Record<string, string> = {}, install = false) {
  const {checkout, runner} = freshRunner(sandbox, remote, ++jobs)
  const bin = path.join(runner, 'bin')
  mkdirSync(bin)
  writeFileSync(path.join(bin, 'wave'), `#!/bin/sh\nexec "${process.execPath}" "${BIN_RUN}" "$@"\n`)
  chmodSync(path.join(bin, 'wave'), 0o755)
  const payload = path.join(runner, 'TRIGGER_PAYLOAD')
  writeFileSync(payload, JSON.stringify(noteEvent(gitlab, MR, body).payload))
  const jobTmp = path.join(runner, 'job-tmp')
  mkdirSync(jobTmp)
  const job = recipe['wave:run']
  const template = recipe[job.extends!]
  const env = waveEnv({
    env: {
      ...recipe.variables,
      ...template.variables,
      ...job.variables,
      ...gitlabJobEnv(gitlab, {checkout, job: jobs, remote, runner, source: 'parent_pipeline'}),
      PATH: `${bin}:${process.env.PATH}`,
      TRIGGER_PAYLOAD: payload,
      WAVE_JOB_TMP: jobTmp,
      WAVE_THREAD: 'mr-7',
      ...variables,
    },
    home: sandbox.home,
    server,
  })
  const installing = (template.before_script ?? [])
    .flat()
    .map(String)
    .find((line) => line.includes('WAVE_INSTALL_RESULT'))!
  const script = [...(install ? [installing] : []), ...(job.script ?? template.script!)].join('\n')
  const ran = await new Promise<{code: number | null; stdout: string; stderr: string}>((done, fail) => {
    const child = spawn('bash', ['-eo', 'pipefail', '-c', script], {cwd: checkout, env, stdio: ['ignore', 'pipe', 'pipe']})
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk))
    child.on('error', fail)
    child.on('close', (code) => done({code, stderr, stdout}))
  })
  expect(ran.stdout + ran.stderr).not.toContain(GITLAB_TOKEN)
  // A failed job leaves none: wave:units, which needs wave:run, does not run then.
  const units = path.join(checkout, env.WAVE_GITLAB_UNITS_FILE!)
  return {...ran, units: (existsSync(units) ? parse(readFileSync(units, 'utf8')) : undefined) as Record<string, {when?: string}>}
}

const repliesTo = (login: string) => gitlab.notes.filter((n) => n.body.includes(`@${login} `) && !n.body.startsWith('<!--'))

describe("the GitLab recipe's wave:run: a refusal is an answer", {timeout: 120_000}, () => {
  it('a typo gets its reply, the job ends green and the units child passes; WAVE_FAIL_ON_REFUSAL=true turns it red', async () => {
    const typo = await waveRun('/wave aprove')
    expect(typo.code, typo.stderr).toBe(0)
    expect(typo.stdout).toContain('wave answered the note with a refusal (exit 2)')
    expect(JSON.parse(typo.stdout.split('\n')[0])).toMatchObject({error: {exitCode: 2}, ok: false, refused: true})
    expect(repliesTo('alice')).toHaveLength(1)
    expect(repliesTo('alice')[0].body).toContain('Unknown command /wave aprove')
    // What wave:units triggers next: one job, which runs.
    expect(Object.keys(typo.units)).toEqual(['wave:no-units'])
    expect(typo.units['wave:no-units'].when).toBeUndefined()

    // Control: the project asks refusals to fail the job.
    const strict = await waveRun('/wave aprove', {WAVE_FAIL_ON_REFUSAL: 'true'})
    expect(strict.code).toBe(2)
    expect(repliesTo('alice')).toHaveLength(2)
    expect(server.messageRequests).toHaveLength(0)
  })
})

describe("the GitLab recipe's wave:run: the project's dependencies before the model", {timeout: 120_000}, () => {
  it('a failed install: the note shows its tail and WAVE_INSTALL_COMMAND, no model request, the job fails (exit 1); control: a working install is said and the model asked', async () => {
    const failed = await waveRun('/wave plan Add a farewell function', {WAVE_INSTALL_COMMAND: "echo 'ERR! cannot resolve'; echo '@bob' >&2; exit 4"}, true)
    expect(failed.code).toBe(1)
    expect(JSON.parse(failed.stdout.split('\n').at(-2)!)).toMatchObject({error: {exitCode: 1}, ok: false})
    expect(server.messageRequests).toHaveLength(0)
    const [answer] = repliesTo('alice')
    expect(answer.body).toContain("**The project's dependencies were not installed**, so wave asked no model and ran nothing")
    expect(answer.body).toContain('(WAVE_INSTALL_COMMAND) exited 4')
    expect(answer.body).toMatch(/```\nERR! cannot resolve\n@\u200Bbob\n```/)
    expect(answer.body).toContain('set `WAVE_INSTALL_COMMAND` to the command that installs')

    // Control: the install works; the note says what it ran, and the model plans.
    server.push(...planTurns())
    const planned = await waveRun('/wave plan Add a farewell function', {WAVE_INSTALL_COMMAND: 'echo fetched'}, true)
    expect(planned.code, planned.stderr).toBe(0)
    expect(server.messageRequests).toHaveLength(2)
    const sticky = gitlab.notes.find((n) => n.body.startsWith('<!-- wave:plan:'))!
    expect(sticky.body).toContain('Dependencies: `echo fetched` (WAVE_INSTALL_COMMAND).')
  })
})
