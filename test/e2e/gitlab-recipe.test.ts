/**
 * The GitLab recipe's light first step (examples/gitlab-ci/wave.gitlab-ci.yml, job wave:note), run as a
 * runner runs it: its script from the YAML, in bash, in an empty project directory (no checkout) whose
 * cache holds wave (a shim running this build's bin/run.js under /usr/bin/time), with the note event in
 * TRIGGER_PAYLOAD and an API URL nothing listens on. A note that is no /wave command ends there, within a
 * second of wave's time; a command leaves the child pipeline (its thread's resource group) and the event.
 */
import {spawnSync} from 'node:child_process'
import {chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {parse} from 'yaml'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const recipe = parse(readFileSync(path.join(ROOT, 'examples/gitlab-ci/wave.gitlab-ci.yml'), 'utf8')) as Record<string, {script?: unknown[]}> & {
  variables: Record<string, string>
}
const lightScript = (recipe['wave:note'].script ?? []).flat().map(String).join('\n')

let project: string
beforeEach(() => {
  project = mkdtempSync(path.join(tmpdir(), 'wave-gitlab-note-'))
})
afterEach(() => rmSync(project, {force: true, recursive: true}))

/** The light step for one note event: its exit, output, what it left, and wave's CPU and wall time. */
function lightStep(note: string, other: {event?: object; env?: Record<string, string>} = {}) {
  // wave as the cache restores it: .wave-cache/wave/bin/wave, here this build timed by /usr/bin/time.
  const bin = path.join(project, '.wave-cache', 'wave', 'bin')
  mkdirSync(bin, {recursive: true})
  const timing = path.join(project, '..', `${path.basename(project)}-time`)
  writeFileSync(
    path.join(bin, 'wave'),
    `#!/bin/sh\nexec /usr/bin/time -o "${timing}" -f '%U %S %e' "${process.execPath}" "${path.join(ROOT, 'bin', 'run.js')}" "$@"\n`,
  )
  chmodSync(path.join(bin, 'wave'), 0o755)
  const payload = path.join(project, '..', `${path.basename(project)}-TRIGGER_PAYLOAD`)
  const event = other.event ?? {
    event_type: 'note',
    merge_request: {iid: 7, source_branch: 'feature', target_branch: 'main', title: 'Greet people by name'},
    object_attributes: {author_id: 11, created_at: '2026-01-01 10:00:00 UTC', id: 501, note, noteable_type: 'MergeRequest', system: false},
    object_kind: 'note',
    project: {id: 42, path_with_namespace: 'group/demo', web_url: 'https://gitlab.test/group/demo'},
    project_id: 42,
    user: {id: 11, name: 'alice', username: 'alice'},
  }
  writeFileSync(payload, JSON.stringify(event))
  const env: Record<string, string> = {
    ...recipe.variables,
    // No API is reachable: the light step must not need one.
    CI_API_V4_URL: 'http://127.0.0.1:9/api/v4',
    CI_PIPELINE_ID: '77',
    CI_PIPELINE_SOURCE: 'trigger',
    CI_PROJECT_DIR: project,
    CI_PROJECT_ID: '42',
    CI_PROJECT_PATH: 'group/demo',
    CI_PROJECT_URL: 'https://gitlab.test/group/demo',
    CI_SERVER_URL: 'https://gitlab.test',
    HOME: project,
    PATH: process.env.PATH ?? '',
    TRIGGER_PAYLOAD: payload,
    WAVE_HOME: path.join(project, '..', `${path.basename(project)}-home`),
    ...other.env,
  }
  // As GitLab's bash runs a job's script: errexit and pipefail.
  const ran = spawnSync('bash', ['-eo', 'pipefail', '-c', lightScript], {cwd: project, encoding: 'utf8', env, timeout: 60_000})
  const [user, system, wall] = readFileSync(timing, 'utf8').trim().split('\n').at(-1)!.split(' ').map(Number)
  rmSync(timing, {force: true})
  rmSync(payload, {force: true})
  return {...ran, child: parse(readFileSync(path.join(project, 'wave-child.yml'), 'utf8')), cpuSeconds: user + system, event, wallSeconds: wall}
}

describe('the GitLab recipe: the light first step of a note', {timeout: 120_000}, () => {
  it('a note that is no /wave command ends the job at once: no API, no checkout, under a second of wave time', () => {
    const step = lightStep('Thanks! Looks good.')
    expect(step.status, step.stderr).toBe(0)
    expect(step.stdout).toContain('Not a /wave command: nothing to do.')
    // The child GitLab insists on: one manual job that never runs.
    expect(step.child).toEqual({'wave:nothing-to-do': {script: ['true'], when: 'manual'}})
    console.log(`wave gitlab --triage for a plain note: ${step.cpuSeconds.toFixed(2)} s of CPU, ${step.wallSeconds.toFixed(2)} s wall`)
    expect(step.cpuSeconds).toBeLessThan(1)
  })

  it('control: a /wave command leaves the child pipeline in its merge request resource group, and the event for it', () => {
    const step = lightStep('/wave plan Add a farewell function')
    expect(step.status, step.stderr).toBe(0)
    expect(step.stdout).not.toContain('nothing to do')
    expect(step.child).toEqual({
      include: [{local: 'wave.gitlab-ci.yml'}],
      variables: {WAVE_COMMAND: 'plan', WAVE_PARENT_PIPELINE_ID: '77', WAVE_THREAD: 'mr-7'},
    })
    expect(JSON.parse(readFileSync(path.join(project, 'wave-event', 'payload.json'), 'utf8'))).toEqual(step.event)
    expect(JSON.parse(readFileSync(path.join(project, 'wave-triage.json'), 'utf8'))).toMatchObject({
      command: 'plan',
      outcome: 'triaged',
      thread: 'mr-7',
      version: 1,
    })
  })

  it('a push to a merge request (its webhook event) leaves a child in its resource group only with WAVE_REPLAN_ON_PUSH "true"', () => {
    const pushed = {
      event_type: 'merge_request',
      object_attributes: {action: 'update', iid: 7, oldrev: '1'.repeat(40), source_branch: 'feature', target_branch: 'main'},
      object_kind: 'merge_request',
      project: {id: 42, path_with_namespace: 'group/demo', web_url: 'https://gitlab.test/group/demo'},
      user: {id: 11, name: 'alice', username: 'alice'},
    }
    // The recipe's default: off, nothing to do.
    expect(recipe.variables.WAVE_REPLAN_ON_PUSH).toBe('false')
    const off = lightStep('', {event: pushed})
    expect(off.status, off.stderr).toBe(0)
    expect(off.stdout).toContain('Not a /wave command: nothing to do.')
    expect(off.child).toEqual({'wave:nothing-to-do': {script: ['true'], when: 'manual'}})

    const on = lightStep('', {env: {WAVE_REPLAN_ON_PUSH: 'true'}, event: pushed})
    expect(on.status, on.stderr).toBe(0)
    expect(on.child).toEqual({
      include: [{local: 'wave.gitlab-ci.yml'}],
      variables: {WAVE_COMMAND: 'pushed', WAVE_PARENT_PIPELINE_ID: '77', WAVE_THREAD: 'mr-7'},
    })
  })
})
