import {mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync} from 'node:fs'
import {createServer} from 'node:http'
import type {AddressInfo} from 'node:net'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {approvalRecordSchema} from '../../../src/plans/approval.js'
import {failedChecksMessage, runChecks} from '../../../src/plans/checks.js'
import {checkLogPath} from '../../../src/plans/store.js'
import {OFFLINE_NOTE} from '../../../src/plans/offline-evidence.js'
import {sandboxStatus} from '../../../src/base/process/sandbox.js'

let root: string
beforeEach(() => {
  root = realpathSync(mkdtempSync(path.join(tmpdir(), 'wave-checks-')))
})
afterEach(() => rmSync(root, {force: true, recursive: true}))

describe('the approved checks', () => {
  it('keep the failing line of 300 for the retry turn, and the whole output in the file beside the transcript', async () => {
    const planPath = path.join(root, 'gentle-breeze.md')
    const command = `seq 1 300 | sed 's/^150$/not ok 64 should be equal/'; exit 1`
    // Unsandboxed here: what is kept does not depend on the sandbox (the e2e suites run it contained).
    const [result] = await runChecks([{command}], {
      outputFile: (index) => checkLogPath(planPath, index),
      root,
      sandbox: {enabled: false, network: false},
      signal: new AbortController().signal,
    })
    expect(result.exitCode).toBe(1)
    expect(result.outputFile).toBe(path.join(root, 'gentle-breeze.check-1-1.log'))
    expect(readFileSync(result.outputFile!, 'utf8').split('\n')).toHaveLength(301)
    expect(result.outputTail).toContain('150 | not ok 64 should be equal')
    expect(failedChecksMessage([result], {attempt: 1, of: 2})).toContain('150 | not ok 64 should be equal')
  })
})

describe('the approval record’s sandbox', () => {
  const record = (sandbox: unknown) => approvalRecordSchema.safeParse({decision: 'approved', plan: {sha256: 'a'.repeat(64)}, sandbox, version: 1})

  it('keeps named hosts, and refuses them with the whole network, with the sandbox off, or when they are no host names', () => {
    const parsed = record({enabled: true, network: false, networkAllow: ['registry.npmjs.org']})
    expect(parsed.success && parsed.data.sandbox).toEqual({enabled: true, network: false, networkAllow: ['registry.npmjs.org']})
    expect(record({enabled: true, network: true, networkAllow: ['registry.npmjs.org']}).success).toBe(false)
    expect(record({enabled: false, network: false, networkAllow: ['registry.npmjs.org']}).success).toBe(false)
    expect(record({enabled: true, network: false, networkAllow: ['https://registry.npmjs.org/']}).success).toBe(false)
    // Control: a record without hosts is as before.
    const plain = record(undefined)
    expect(plain.success && plain.data.sandbox).toEqual({enabled: true, network: false})
  })
})

describe('a check that needs the network in a sandbox without it', () => {
  /** A registry stand-in that counts what it is asked and has no package (404). */
  async function registry() {
    let asked = 0
    const server = createServer((_, response) => {
      asked++
      response.writeHead(404, {'content-type': 'application/json'}).end('{"error":"Not found"}')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    return {
      asked: () => asked,
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    }
  }

  it.skipIf(!sandboxStatus().available)(
    'fails without one try at the registry (npm offline, no retries), its evidence naming install-command and sandbox-network-allow; with the network (control) npm asks it',
    async () => {
      writeFileSync(path.join(root, 'package.json'), '{"name":"lib","version":"1.0.0"}\n')
      const stand = await registry()
      try {
        const command = `npm install left-pad --registry ${stand.url} --no-audit --no-fund`
        const run = (network: boolean) => runChecks([{command}], {root, sandbox: {enabled: true, network}, signal: new AbortController().signal})
        const [offline] = await run(false)
        expect(offline.exitCode).not.toBe(0)
        // npm said it would not go to the network at all: no request, so no retry to wait out.
        expect(offline.outputTail).toMatch(/ENOTCACHED|only-if-cached/)
        expect(stand.asked()).toBe(0)
        expect(offline.outputTail).toContain(OFFLINE_NOTE)
        expect(OFFLINE_NOTE).toMatch(/install-command.*sandbox-network-allow/)

        // Control: the sandbox with the network: npm asks the stand-in, which has no such package; no note.
        const [online] = await run(true)
        expect(online.exitCode).not.toBe(0)
        expect(stand.asked()).toBeGreaterThan(0)
        expect(online.outputTail).not.toContain(OFFLINE_NOTE)
      } finally {
        await stand.close()
      }
    },
    60_000,
  )

  it('a check failing for another reason gets no note', async () => {
    const [result] = await runChecks([{command: 'echo "expected 1 to be 2"; exit 1'}], {
      root,
      sandbox: {enabled: false, network: false},
      signal: new AbortController().signal,
    })
    expect(result.outputTail).not.toContain(OFFLINE_NOTE)
  })
})
