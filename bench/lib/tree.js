/**
 * A generated source tree for the search benchmark: many small text files of pseudo-code in nested
 * directories, a `.gitignore` at the root and a few nested ones, and ignored directories (node_modules,
 * build output, logs) that a gitignore-aware search must prune. Deterministic for a given size.
 */
import {execFileSync} from 'node:child_process'
import {mkdirSync, writeFileSync} from 'node:fs'
import {mkdtemp, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'

/** The rare literal the Grep figures look for: present in about 1 file in 1,000. */
export const NEEDLE = 'wave_bench_needle_7f3a'
/** A token in about 3% of the files, for the content-mode figure. */
export const COMMON = 'TODO(perf)'

export const SIZES = {
  full: {dirs: 50, subdirs: 20, filesPerDir: 50, meanBytes: 10_600, ignoredFiles: 6_000},
  quick: {dirs: 10, subdirs: 10, filesPerDir: 50, meanBytes: 10_600, ignoredFiles: 1_000},
  /** The run's work-tree snapshot (figure 12): 100,000 small files, committed (`commit: true`). */
  snapshot: {dirs: 100, subdirs: 20, filesPerDir: 50, meanBytes: 400, ignoredFiles: 6_000},
  snapshotQuick: {dirs: 25, subdirs: 20, filesPerDir: 50, meanBytes: 400, ignoredFiles: 1_500},
}

const EXTENSIONS = ['ts', 'ts', 'ts', 'js', 'js', 'py', 'md', 'json', 'go', 'txt']
const WORDS = (
  'const let return function async await import export from if else for while switch case break ' +
  'value result error config options request response handler buffer stream file path index count ' +
  'parse render update create delete fetch load save user session token cache query table record ' +
  'string number boolean object array map set promise callback event listener context state props'
).split(' ')

/** A small deterministic PRNG (mulberry32). */
function rng(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

/** ~8 MB of code-like lines that every file is cut from. */
function corpus(random) {
  const lines = []
  let bytes = 0
  while (bytes < 8 * 1024 * 1024) {
    const indent = '  '.repeat(Math.floor(random() * 4))
    const n = 3 + Math.floor(random() * 9)
    const words = []
    for (let i = 0; i < n; i++) words.push(WORDS[Math.floor(random() * WORDS.length)])
    const kind = random()
    const line =
      kind < 0.2
        ? `${indent}function ${words[0]}_${words[1]}(${words.slice(2, 4).join(', ')}) {`
        : kind < 0.3
          ? `${indent}// ${words.join(' ')}`
          : kind < 0.4
            ? `${indent}}`
            : `${indent}${words[0]} ${words[1]} = ${words.slice(2).join('.')}(${Math.floor(random() * 1000)})`
    lines.push(line)
    bytes += line.length + 1
  }

  return lines.join('\n') + '\n'
}

/**
 * Creates the tree under os.tmpdir(); returns its root and what it holds. The root is a git
 * repository (empty: nothing added, unless `commit`), so that ripgrep and `git grep --untracked` apply the ignore files.
 */
export async function generateTree(size = 'full', {commit = false} = {}) {
  const spec = SIZES[size]
  const root = await mkdtemp(path.join(tmpdir(), 'wave-bench-tree-'))
  const random = rng(0x5eed)
  const text = corpus(random)
  const cut = (bytes) => {
    const start = text.indexOf('\n', Math.floor(random() * (text.length - bytes - 200))) + 1
    const end = text.indexOf('\n', start + bytes) + 1
    return text.slice(start, end)
  }

  const stats = {files: 0, bytes: 0, ignoredFiles: 0, ignoredBytes: 0, needleFiles: 0, commonFiles: 0, tsFiles: 0}
  const pending = []
  const flush = async (force) => {
    if (pending.length >= 256 || (force && pending.length > 0)) await Promise.all(pending.splice(0).map(([f, c]) => writeFile(f, c)))
  }

  writeFileSync(path.join(root, '.gitignore'), 'node_modules/\n/build/\n*.log\ncoverage/\n!important.log\n')
  for (let d = 0; d < spec.dirs; d++) {
    for (let s = 0; s < spec.subdirs; s++) {
      const dir = path.join(root, 'packages', `pkg${d}`, 'src', `mod${s}`)
      mkdirSync(dir, {recursive: true})
      // Nested ignore files: every tenth module ignores its generated/ directory.
      if (s % 10 === 0) {
        writeFileSync(path.join(dir, '.gitignore'), 'generated/\n')
        mkdirSync(path.join(dir, 'generated'))
        for (let g = 0; g < 5; g++) {
          const body = cut(spec.meanBytes) + `${NEEDLE} in generated\n`
          pending.push([path.join(dir, 'generated', `gen${g}.ts`), body])
          stats.ignoredFiles++
          stats.ignoredBytes += body.length
        }
      }

      for (let f = 0; f < spec.filesPerDir; f++) {
        const ext = EXTENSIONS[Math.floor(random() * EXTENSIONS.length)]
        let body = cut(Math.floor(spec.meanBytes * (0.3 + random() * 1.4)))
        const r = random()
        if (r < 0.001) {
          body = insertLine(body, `  const marker = '${NEEDLE}' // found it`, random)
          stats.needleFiles++
        } else if (r < 0.031) {
          body = insertLine(body, `  // ${COMMON}: cache this result`, random)
          stats.commonFiles++
        }

        if (ext === 'ts') stats.tsFiles++
        pending.push([path.join(dir, `file${f}.${ext}`), body])
        stats.files++
        stats.bytes += body.length
        await flush(false)
      }

      // An ignored log beside the sources.
      if (s % 4 === 0) {
        const body = `${NEEDLE} in a log\n`.repeat(50)
        pending.push([path.join(dir, 'debug.log'), body])
        stats.ignoredFiles++
        stats.ignoredBytes += body.length
      }
    }
  }

  // Big ignored directories: a search that does not prune them reads them all.
  for (const [top, share] of /** @type {Array<[string, number]>} */ ([
    ['node_modules', 0.8],
    ['build', 0.2],
  ])) {
    const count = Math.floor(spec.ignoredFiles * share)
    for (let i = 0; i < count; i++) {
      const dir = path.join(root, top, `dep${Math.floor(i / 100)}`, 'lib')
      if (i % 100 === 0) mkdirSync(dir, {recursive: true})
      const body = cut(spec.meanBytes) + `${NEEDLE} ${COMMON} in ${top}\n`
      pending.push([path.join(dir, `index${i % 100}.ts`), body])
      stats.ignoredFiles++
      stats.ignoredBytes += body.length
      await flush(false)
    }
  }

  await flush(true)
  execFileSync('git', ['init', '-q', root], {stdio: 'ignore'})
  if (commit) {
    const env = {
      ...process.env,
      GIT_AUTHOR_NAME: 'bench',
      GIT_AUTHOR_EMAIL: 'bench@example.com',
      GIT_COMMITTER_NAME: 'bench',
      GIT_COMMITTER_EMAIL: 'bench@example.com',
    }
    execFileSync('git', ['-c', 'gc.auto=0', 'add', '-A'], {cwd: root, env, stdio: 'ignore'})
    // No automatic gc: it would go on in the background, writing in .git while the tree is measured or removed.
    execFileSync('git', ['-c', 'gc.auto=0', 'commit', '-q', '--no-gpg-sign', '-m', 'tree'], {cwd: root, env, stdio: 'ignore'})
  }

  return {root, ...stats}
}

function insertLine(body, line, random) {
  const lines = body.split('\n')
  lines.splice(Math.floor(random() * (lines.length - 1)), 0, line)
  return lines.join('\n')
}
