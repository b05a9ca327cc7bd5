import {readFile} from 'node:fs/promises'
import path from 'node:path'
import {describe, expect, it} from 'vitest'

import bash from '../../src/plugins/bash.js'
import {contextFor, useWorkspaces} from './context.js'

const workspace = useWorkspaces()

async function runBash(root: string, command: string, timeout?: number, signal?: AbortSignal): Promise<string> {
  const ctx = await contextFor(root, {}, signal)
  return bash.run({command, timeout}, {...ctx, target: undefined})
}

/** Whether a process is running: a zombie left for a non-reaping init (as in containers) does not count. */
async function running(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
    return !/^\d+ \(.*\) [ZX]/.test(stat)
  } catch {
    return false
  }
}

describe('Bash', () => {
  it('runs in the workspace root and returns the output', async () => {
    const root = await workspace({'a.txt': 'from the workspace\n'})
    expect(await runBash(root, 'pwd && cat a.txt')).toBe(`${root}\nfrom the workspace`)
  })

  it('has real effects in the workspace', async () => {
    const root = await workspace()
    await runBash(root, 'echo made > made.txt')
    expect(await readFile(path.join(root, 'made.txt'), 'utf8')).toBe('made\n')
  })

  it('reports a nonzero exit code with the output, without failing', async () => {
    const root = await workspace()
    expect(await runBash(root, 'echo out; echo err >&2; exit 3')).toBe('out\nerr\nExit code: 3')
  })

  it('says when there is no output', async () => {
    const root = await workspace()
    expect(await runBash(root, 'true')).toBe('(no output)')
  })

  it('keeps invalid UTF-8 as replacement characters', async () => {
    const root = await workspace()
    expect(await runBash(root, String.raw`printf 'caf\xc3\xa9 \xff end'`)).toBe('café \uFFFD end')
  })

  it('keeps the head and tail of long output, saying how much was cut', async () => {
    const root = await workspace()
    const output = await runBash(root, 'for i in $(seq 1 20000); do echo "line $i"; done')
    expect(output.length).toBeLessThan(30_200)
    expect(output.startsWith('line 1\nline 2\n')).toBe(true)
    expect(output.endsWith('line 19999\nline 20000')).toBe(true)
    expect(output).toMatch(/\[\.\.\. \d+ characters of output cut from the middle \.\.\.\]/)
  })

  it('kills the whole process group on timeout and says so', async () => {
    const root = await workspace()
    const started = Date.now()
    const output = await runBash(root, 'sleep 30 & echo $! > child.pid; echo started; wait', 500)
    expect(Date.now() - started).toBeLessThan(5000)
    expect(output).toContain('started')
    expect(output).toContain('Command timed out after 500 ms and was killed.')
    const child = Number(await readFile(path.join(root, 'child.pid'), 'utf8'))
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(await running(child)).toBe(false)
  })

  it('kills the command when the session is interrupted', async () => {
    const root = await workspace()
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 300)
    const started = Date.now()
    const output = await runBash(root, 'echo begun; sleep 30', undefined, controller.signal)
    expect(Date.now() - started).toBeLessThan(5000)
    expect(output).toBe('begun\nCommand was interrupted and killed.')
  })

  it('does not wait for a background process that keeps the output open', async () => {
    const root = await workspace()
    const started = Date.now()
    const output = await runBash(root, 'sleep 5 & echo $! > bg.pid; echo done')
    expect(Date.now() - started).toBeLessThan(3000)
    expect(output).toContain('done')
    expect(output).toContain('A background process still holds the output open')
    process.kill(Number(await readFile(path.join(root, 'bg.pid'), 'utf8')))
  })

  it('hides the API key from commands', async () => {
    const root = await workspace()
    process.env.ANTHROPIC_API_KEY = 'sk-test-secret'
    try {
      expect(await runBash(root, 'echo "key=${ANTHROPIC_API_KEY:-unset}"')).toBe('key=unset')
    } finally {
      delete process.env.ANTHROPIC_API_KEY
    }
  })

  it('gives commands no stdin', async () => {
    const root = await workspace()
    expect(await runBash(root, 'cat; echo after')).toBe('after')
  })
})
