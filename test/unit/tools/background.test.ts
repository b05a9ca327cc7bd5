/**
 * Bash with run_in_background, TaskOutput and TaskStop against the real sandbox: a background command
 * returns its task id at once, its output is read while it runs, and TaskStop or the session's end
 * leaves none of its processes behind (judged by /proc, where the sandbox's processes are visible).
 */
import {readdirSync, readFileSync} from 'node:fs'
import {randomUUID} from 'node:crypto'
import {afterEach, describe, expect, it} from 'vitest'

import type {SandboxSettings} from '../../../src/base/process/sandbox.js'
import {BackgroundTasks} from '../../../src/tools/background.js'
import bash from '../../../src/tools/bash.js'
import taskOutput from '../../../src/tools/task-output.js'
import taskStop from '../../../src/tools/task-stop.js'
import type {ToolContext} from '../../../src/tools/tool.js'
import {contextFor, useWorkspaces} from './context.js'

const workspace = useWorkspaces()
const opened: BackgroundTasks[] = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((tasks) => tasks.close()))
})

/** A context with a background registry, as a session's tool set gives it. */
async function sessionContext(root: string, sandbox?: SandboxSettings): Promise<ToolContext & {tasks: BackgroundTasks}> {
  const tasks = new BackgroundTasks()
  opened.push(tasks)
  return {...(await contextFor(root)), sandbox, target: undefined, tasks}
}

/** Processes whose command line holds `marker`, the sandbox's included (its PID namespace is visible from here). */
function processesWith(marker: string): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) found.push(Number(entry))
    } catch {
      // Gone while listed.
    }
  }

  return found
}

/** Polls `check` until it holds, failing loudly at the deadline. */
async function eventually<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, deadlineMs = 15_000): Promise<T> {
  const end = Date.now() + deadlineMs
  for (;;) {
    const value = await check()
    if (value) return value
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

/** The output part of a TaskOutput result ('' when there is no new output). */
const outputOf = (read: string) => read.split('Output since the last reading:\n')[1] ?? ''

/** Processes whose argv[0] is `name` (set with exec -a). */
const commandsNamed = (name: string) =>
  processesWith(name).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] === name
    } catch {
      return false
    }
  })

const taskIdOf = (result: string) => /task (bash_\d+)/.exec(result)?.[1]

describe.each([
  ['in the sandbox', undefined],
  ['unsandboxed', {enabled: false, network: false}],
] as Array<[string, SandboxSettings | undefined]>)('background commands %s', (_name, sandbox) => {
  it('start at once, are read while they run, and TaskStop ends every process of them', async () => {
    const root = await workspace()
    const ctx = await sessionContext(root, sandbox)
    const marker = `wave-bg-${randomUUID()}`
    // A dev server's shape: prints a line, then keeps running (a child it started included).
    const started = await bash.run(
      {
        command: `echo ready; (exec -a ${marker}-child sleep 600) & exec -a ${marker} bash -c 'while true; do echo tick; sleep 0.05; done'`,
        description: 'Loop forever',
        run_in_background: true,
      },
      ctx,
    )
    const id = taskIdOf(started)
    expect(id, started).toBe('bash_1')
    expect(started).toMatch(/TaskOutput/)

    // Every reading returns what came since the previous one: gathered until the loop has ticked.
    let seen = ''
    const first = await eventually('the first output', async () => {
      const read = await taskOutput.run({block: false, task_id: id!}, ctx)
      seen += outputOf(read)
      return /tick/.test(seen) ? read : undefined
    })
    expect(first).toMatch(/^Task bash_1 is running: .*\(Loop forever\)/)
    expect(seen).toMatch(/^ready\n?tick/)
    await eventually('both processes', () => processesWith(marker).length >= 2)

    // A second read returns only what came since the first.
    const second = await eventually('more output', async () => {
      const read = await taskOutput.run({block: false, task_id: id!}, ctx)
      return /tick/.test(outputOf(read)) ? read : undefined
    })
    expect(outputOf(second)).not.toMatch(/ready/)

    const stopped = await taskStop.run({task_id: id!}, ctx)
    expect(stopped).toMatch(/^Stopped task bash_1\./)
    expect(stopped).toMatch(/was stopped/)
    expect(processesWith(marker)).toEqual([])
    expect(await taskStop.run({task_id: id!}, ctx)).toMatch(/had already ended/)
  })

  it('TaskOutput with block waits for the end and reports the exit code', async () => {
    const root = await workspace()
    const ctx = await sessionContext(root, sandbox)
    const id = taskIdOf(await bash.run({command: 'echo working; echo made > made.txt; exit 3', run_in_background: true}, ctx))
    const read = await taskOutput.run({task_id: id!, timeout: 20_000}, ctx)
    expect(read).toBe(`Task ${id} exited with code 3: echo working; echo made > made.txt; exit 3\nOutput since the last reading:\nworking`)
    expect(readFileSync(`${root}/made.txt`, 'utf8')).toBe('made\n')
  })

  it('closing the registry (the session ending) ends every background command, and starts none after', async () => {
    const root = await workspace()
    const ctx = await sessionContext(root, sandbox)
    const marker = `wave-bg-${randomUUID()}`
    await bash.run({command: `exec -a ${marker}-a sleep 600`, run_in_background: true}, ctx)
    await bash.run({command: `exec -a ${marker}-b sleep 600`, run_in_background: true}, ctx)
    // The commands themselves (argv[0] is the marker), not only the bwrap that carries their text: a sandbox
    // still being set up is not what this test is about.
    await eventually('both commands', () => commandsNamed(`${marker}-a`).length > 0 && commandsNamed(`${marker}-b`).length > 0)
    await ctx.tasks.close()
    expect(processesWith(marker)).toEqual([])
    await expect(bash.run({command: 'true', run_in_background: true}, ctx)).rejects.toThrow(/session is ending/)
  })
})

describe("the model's work ending (endAll, before a run's checks)", () => {
  it('ends a running task and what a completed one left behind, and new tasks still start after', async () => {
    const root = await workspace()
    const ctx = await sessionContext(root, {enabled: false, network: false})
    const marker = `wave-bg-${randomUUID()}`
    // Unsandboxed, a shell that exits leaves its `&` child running in its process group: the task reads "completed".
    const left = taskIdOf(await bash.run({command: `(exec -a ${marker}-left sleep 600 >/dev/null 2>&1) & echo started`, run_in_background: true}, ctx))
    expect(await taskOutput.run({task_id: left!, timeout: 20_000}, ctx)).toMatch(/exited with code 0/)
    await eventually('the leftover', () => commandsNamed(`${marker}-left`).length > 0)
    const running = taskIdOf(await bash.run({command: `exec -a ${marker}-running sleep 600`, run_in_background: true}, ctx))
    await eventually('the running one', () => commandsNamed(`${marker}-running`).length > 0)

    const ended = await ctx.tasks.endAll()
    expect(ended).toEqual({ended: [running], survived: []})
    expect(processesWith(marker)).toEqual([])
    // Not closed: the model's next turn (after failing checks) may start one again.
    const again = taskIdOf(await bash.run({command: 'echo again', run_in_background: true}, ctx))
    expect(await taskOutput.run({task_id: again!, timeout: 20_000}, ctx)).toMatch(/again/)
  })
})

describe('background output and ids', () => {
  it('caps unread output, keeping its head and its tail', async () => {
    const root = await workspace()
    const ctx = await sessionContext(root)
    const id = taskIdOf(await bash.run({command: 'echo FIRST; head -c 200000 /dev/zero | tr "\\0" x; echo; echo LAST', run_in_background: true}, ctx))
    const read = await taskOutput.run({task_id: id!, timeout: 20_000}, ctx)
    expect(read.length).toBeLessThan(31_000)
    expect(read).toMatch(/FIRST/)
    expect(read).toMatch(/LAST/)
    expect(read).toMatch(/characters of output cut from the middle/)
  })

  it('an unknown task_id fails, naming the tasks there are', async () => {
    const root = await workspace()
    const ctx = await sessionContext(root)
    await expect(taskOutput.run({task_id: 'bash_9'}, ctx)).rejects.toThrow(/No background task "bash_9".*None was started/)
    const id = taskIdOf(await bash.run({command: 'true', run_in_background: true}, ctx))
    await expect(taskStop.run({task_id: 'shell_1'}, ctx)).rejects.toThrow(new RegExp(`Its tasks: ${id}`))
  })

  it('block: false with a timeout returns at once while the command runs', async () => {
    const root = await workspace()
    const ctx = await sessionContext(root)
    const id = taskIdOf(await bash.run({command: 'sleep 600', run_in_background: true}, ctx))
    const read = await taskOutput.run({block: true, task_id: id!, timeout: 0}, ctx)
    expect(read).toMatch(/is still running after 0 ms/)
    expect(await taskOutput.run({block: false, task_id: id!}, ctx)).toMatch(/is running: sleep 600\n\(no new output\)/)
  })
})
