import v8 from 'node:v8'

/**
 * WebAssembly run as V8's baseline compiler (Liftoff) compiled it. By default V8 recompiles a module's hot
 * functions with TurboFan on background threads; the two modules wave runs are hot from their first use and
 * small in what they do, so that recompilation is CPU spent for nothing a session notices: the shell grammar's
 * lexer (~1.2 CPU-seconds a process) and node's HTTP parser, undici's llhttp (~140 ms a process that makes a
 * request). Measured in bench/RESULTS.md (figures 13 and 14).
 *
 * V8 decides to tier up while the code runs, from its flags at that moment, so the flags stay set from the
 * first compilation to the command's end (`defaultTiers`, WaveCommand's `finally`). Set, they change the
 * flag digest V8 checks code caches against: set at start they cost node's own built-in modules their code
 * cache (~30 ms), hence not before the first compilation, when what starts a session has loaded. And
 * `--no-liftoff-only` alone does not put back the two tier-ups `--liftoff-only` turns off by implication: a
 * code cache written after it (the bundles' at exit) would be refused by every later process. So
 * `defaultTiers` sets all three, and the bundles' loader reads caches with them (`withNodeTiers`) and calls it
 * before writing its caches at exit (base/bundles.ts).
 */
/**
 * Whether Liftoff alone is on, where both copies of this module in a process see it: a command's bundle has
 * one, the bundles' loader (dist/base/bundles.js, never bundled) the other.
 */
const shared = globalThis as {[key: symbol]: {liftoff: boolean} | undefined}
const STATE = Symbol.for('wave.wasm')
shared[STATE] ??= {liftoff: false}
const state = shared[STATE]

const LIFTOFF_ONLY = '--liftoff-only'
const DEFAULT_TIERS = '--no-liftoff-only --wasm-dynamic-tiering --wasm-tier-up'

/** WebAssembly compiled from now on runs as Liftoff compiled it, until `defaultTiers`. */
export function liftoffOnly(): void {
  if (state.liftoff) return
  state.liftoff = true
  v8.setFlagsFromString(LIFTOFF_ONLY)
}

/**
 * V8's default tiers again (with the flag digest node started with), if Liftoff alone is on: at a command's end,
 * and before a code cache is written. Otherwise nothing: flags a user gave node stay as they are.
 */
export function defaultTiers(): void {
  if (!state.liftoff) return
  state.liftoff = false
  v8.setFlagsFromString(DEFAULT_TIERS)
}

/**
 * What `compile` returns, compiled with node's flags: a bundle loaded once Liftoff alone is on (marked's, when
 * `wave plan` reads the contract it wrote) would have its code cache refused, and rewritten at every exit.
 * Synchronous, so no WebAssembly runs meanwhile.
 */
export function withNodeTiers<T>(compile: () => T): T {
  if (!state.liftoff) return compile()
  v8.setFlagsFromString(DEFAULT_TIERS)
  try {
    return compile()
  } finally {
    v8.setFlagsFromString(LIFTOFF_ONLY)
  }
}

/** The fetch functions this module made. */
const installed = new WeakSet<typeof fetch>()

/**
 * Node's fetch with its HTTP parser run as Liftoff compiled it: `target.fetch` replaced by a function whose
 * first call loads undici (asking for `Headers` loads it with its code cache, and starts llhttp's
 * compilation) and turns Liftoff alone on before the parser runs. Later calls are the original's. The
 * command base installs it once a process; installing over a fetch made here is a no-op.
 */
export function fetchParsedByLiftoff(target: {fetch: typeof fetch; Headers?: unknown} = globalThis): void {
  const original = target.fetch
  if (installed.has(original)) return
  let first = true
  target.fetch = function fetchOnce(this: unknown, ...args: Parameters<typeof fetch>) {
    if (first) {
      first = false
      void target.Headers
      liftoffOnly()
    }

    return original.apply(this, args)
  } as typeof fetch
  installed.add(target.fetch)
}
