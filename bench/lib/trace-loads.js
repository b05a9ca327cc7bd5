// Loaded with `node --import` into a process under measurement: appends every module URL the ESM loader
// resolves, and every script compiled with node:vm (the build's bundles, src/base/bundles.ts), to the file
// named by WAVE_BENCH_LOADS_FILE, so the benchmark can tell which packages a command loads (the SDK must
// not load for commands that do not call the model).
import {appendFileSync} from 'node:fs'
import {register} from 'node:module'
import vm from 'node:vm'

const file = process.env.WAVE_BENCH_LOADS_FILE
if (file) {
  const traced = file
  const hooks = `
    import {appendFileSync} from 'node:fs'
    export async function resolve(specifier, context, next) {
      const result = await next(specifier, context)
      appendFileSync(${JSON.stringify(file)}, result.url + '\\n')
      return result
    }`
  register(`data:text/javascript,${encodeURIComponent(hooks)}`)
  const {Script} = vm
  vm.Script = class TracedScript extends Script {
    constructor(/** @type {string} */ code, /** @type {vm.ScriptOptions} */ options) {
      super(code, options)
      if (options?.filename) appendFileSync(traced, `${options.filename}\n`)
    }
  }
}
