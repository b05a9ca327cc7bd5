import {createServer} from 'node:http'
import type {AddressInfo} from 'node:net'
import v8 from 'node:v8'
import vm from 'node:vm'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {defaultTiers, fetchParsedByLiftoff, liftoffOnly, withNodeTiers} from '../../../src/base/wasm.js'

// What V8's flags are shows in the code caches it accepts: data made with node's flags is refused while
// Liftoff alone is on, and accepted again once the tiers are back (the bundles' cache depends on that).
// Each check compiles a source V8 has not seen (its isolate would answer a known one from memory) of the
// same length, which is all of the source cached data is checked against.
let checks = 0
const source = () => `/*${String(checks++).padStart(6, '0')}*/ function sum(a, b) { return a + b }; sum(1, 2)`
let cachedData: Buffer
const accepted = () => !new vm.Script(source(), {cachedData}).cachedDataRejected

// From node's tiers, whatever a test before in this worker left: an in-process session that analysed a
// command has turned Liftoff alone on (its command's end, which would put them back, is not in-process).
beforeEach(() => {
  defaultTiers()
  cachedData = new vm.Script(source()).createCachedData()
})
afterEach(() => defaultTiers())

describe('WebAssembly run as Liftoff compiled it', () => {
  it('turns Liftoff alone on until the tiers are put back, with the flags node started with after', () => {
    expect(accepted()).toBe(true) // control
    liftoffOnly()
    expect(accepted()).toBe(false)
    defaultTiers()
    expect(accepted()).toBe(true)
  })

  it('leaves flags it did not set as they are', () => {
    v8.setFlagsFromString('--no-wasm-tier-up') // as `node --no-wasm-tier-up` would (NODE_OPTIONS refuses V8's tier flags)
    try {
      defaultTiers()
      expect(accepted()).toBe(false)
    } finally {
      v8.setFlagsFromString('--wasm-tier-up')
    }
    expect(accepted()).toBe(true) // control: node's flags again
  })

  it('compiles with node’s flags inside withNodeTiers, and leaves Liftoff alone on after', () => {
    liftoffOnly()
    expect(withNodeTiers(accepted)).toBe(true)
    expect(accepted()).toBe(false) // control: still on
    defaultTiers()
    expect(withNodeTiers(accepted)).toBe(true)
    expect(accepted()).toBe(true)
  })

  it('turns it on at the first fetch, after loading undici, and passes every call through', async () => {
    const server = createServer((request, response) => response.end(`seen ${request.url}`))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    try {
      const asked: string[] = []
      const target = {
        fetch: globalThis.fetch,
        get Headers() {
          asked.push('Headers')
          return globalThis.Headers
        },
      }
      fetchParsedByLiftoff(target)
      const installed = target.fetch
      fetchParsedByLiftoff(target) // a second install is a no-op
      expect(target.fetch).toBe(installed)
      expect(accepted()).toBe(true)

      expect(await (await target.fetch(`${url}/one`)).text()).toBe('seen /one')
      expect(asked).toEqual(['Headers'])
      expect(accepted()).toBe(false)
      expect(await (await target.fetch(`${url}/two`)).text()).toBe('seen /two')
      expect(asked).toEqual(['Headers']) // only the first call
    } finally {
      server.close()
    }
  })
})
