/** Sandbox: what bubblewrap adds to a Bash call. Run by bench/run.js (`npm run bench -- --only=sandbox`). */
import {spawnSync} from 'node:child_process'
import {readFileSync} from 'node:fs'
import path from 'node:path'
import {performance} from 'node:perf_hooks'

import {heading, record, RUNS} from './lib/harness.js'
import {makeSandbox, PROJECT_ROOT} from './lib/sandbox.js'
import {median, ms, ratio} from './lib/stats.js'

/**
 * What the sandbox adds to a Bash call: the compiled Bash tool running `true` sandboxed (bwrap, its
 * namespaces and mounts) against the same tool with `--sandbox off`, interleaved, in a git workspace
 * (so .git is re-bound read-only too). The bare spawns of the same two commands show bwrap's own share.
 */
async function sandboxCost() {
  heading('7. Sandbox (cost per Bash call over an unsandboxed spawn of the same command)')
  const {default: bash} = await import(path.join(PROJECT_ROOT, 'dist', 'tools', 'bash.js'))
  const {sandboxStatus, sandboxedCommand, unsandboxedCommand} = await import(path.join(PROJECT_ROOT, 'dist', 'base', 'process', 'sandbox.js'))
  const status = sandboxStatus()
  if (!status.available) {
    record({figure: 'sandbox per Bash call', note: status.problem, ok: false, section: 'sandbox', target: '≤ 10 ms', value: 'unavailable'})
    return
  }

  const sandbox = makeSandbox({'README.md': '# bench\n'})
  try {
    const ctx = (enabled) => ({
      readable: async () => true,
      root: sandbox.repo,
      sandbox: {enabled, network: false},
      session: {},
      signal: new AbortController().signal,
    })
    // The CPU time of the command's processes (bwrap and bash, reaped by this process): what the sandbox
    // costs the machine, apart from the waits that a loaded machine stretches.
    const cpu = {off: 0, on: 0}
    const callOnce = async (enabled) => {
      const at = performance.now()
      const cpuAt = childrenCpuMs()
      await bash.run({command: 'true'}, ctx(enabled))
      cpu[enabled ? 'on' : 'off'] += childrenCpuMs() - cpuAt
      return performance.now() - at
    }

    const request = {command: 'true', cwd: sandbox.repo, network: false, root: sandbox.repo}
    const spawnOnce = (plan) => {
      const at = performance.now()
      spawnSync(plan.file, plan.args, {cwd: sandbox.repo, env: plan.env, stdio: 'ignore'})
      return performance.now() - at
    }

    /** @type {Record<'bareOff' | 'bareOn' | 'off' | 'on', number[]>} */
    const times = {bareOff: [], bareOn: [], off: [], on: []}
    for (let run = 0; run < 5; run++) await Promise.all([callOnce(true), callOnce(false)]) // warm up
    cpu.on = cpu.off = 0
    for (let run = 0; run < RUNS.sandbox; run++) {
      times.on.push(await callOnce(true))
      times.off.push(await callOnce(false))
      times.bareOn.push(spawnOnce(sandboxedCommand(request, status.bwrap)))
      times.bareOff.push(spawnOnce(unsandboxedCommand(request)))
    }

    const cost = median(times.on) - median(times.off)
    record({
      baseline: `--sandbox off ${ms(median(times.off))}`,
      figure: 'sandbox cost per Bash call (`true`)',
      note: `the Bash tool: ${ms(median(times.on))} sandboxed, ${ms(median(times.off))} unsandboxed; medians of ${RUNS.sandbox}, interleaved. CPU time of the command's processes per call: ${ms(cpu.on / RUNS.sandbox)} sandboxed, ${ms(cpu.off / RUNS.sandbox)} unsandboxed`,
      ok: cost <= 10,
      section: 'sandbox',
      target: '≤ 10 ms',
      value: ms(cost),
    })
    record({
      baseline: `bash -c true ${ms(median(times.bareOff))}`,
      figure: 'bare bwrap, same namespaces and mounts',
      ratio: ratio(median(times.bareOn), median(times.bareOff)),
      section: 'sandbox',
      value: ms(median(times.bareOn)),
    })
  } finally {
    sandbox.cleanup()
  }
}

/** User and system CPU time of this process's waited-for children so far (/proc/self/stat: cutime, cstime; 100 ticks a second). */
function childrenCpuMs() {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')
  return (Number(fields[13]) + Number(fields[14])) * 10
}

/** 7. Sandbox. */
export const title = '7. Sandbox'
export const run = sandboxCost
