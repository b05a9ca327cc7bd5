import {readFileSync, writeFileSync} from 'node:fs'
import {execFileSync} from 'node:child_process'
const pairs = []
for (const line of readFileSync('.tmp/renames.txt', 'utf8').trim().split('\n')) {
  const [a, b] = line.split(' ')
  pairs.push([a, b])
  if (a.startsWith('src/')) {
    pairs.push(['dist/' + a.slice(4).replace(/\.ts$/, '.js'), 'dist/' + b.slice(4).replace(/\.ts$/, '.js')])
    // short forms inside src/ comments: core/x.ts, plugins/x.ts, and bundle entries core/x.js
    pairs.push([a.slice(4), b.slice(4)])
    pairs.push([a.slice(4).replace(/\.ts$/, '.js'), b.slice(4).replace(/\.ts$/, '.js')])
  }
}
// directories
for (const [a, b] of [['test/core/session/', 'test/unit/app/'], ['test/core/', 'test/unit/'], ['test/plugins/', 'test/unit/tools/'], ['src/core/session/', 'src/app/'], ['src/core/review/', 'src/app/review/'], ['src/core/plans/', 'src/plans/'], ['src/core/policy/', 'src/policy/'], ['src/core/output/', 'src/output/'], ['src/core/workspace/', 'src/base/workspace/'], ['src/core/github/', 'src/forges/github/'], ['src/core/gitlab/', 'src/forges/gitlab/'], ['src/plugins/search/', 'src/tools/search/'], ['src/plugins/sources/', 'src/tools/sources/']]) pairs.push([a, b])
pairs.sort((x, y) => y[0].length - x[0].length)
const esc = s => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const re = new RegExp('(?<![A-Za-z0-9_/.-])(' + pairs.map(p => esc(p[0])).join('|') + ')', 'g')
const to = Object.fromEntries(pairs)
const files = execFileSync('git', ['ls-files', 'src', 'test', 'bench', 'scripts', 'bin', 'docs', 'README.md', 'package.json', 'CHANGELOG.md', 'action.yml', 'setup', 'examples', 'vitest.config.ts', 'biome.json', '.ci'], {encoding: 'utf8'}).trim().split('\n')
let n = 0
for (const f of files) {
  if (!/\.(ts|js|mjs|json|md|yml|yaml|sh)$/.test(f) && !f.startsWith('.ci')) continue
  if (f === 'CHANGELOG.md') continue
  const t = readFileSync(f, 'utf8')
  const o = t.replace(re, m => to[m])
  if (o !== t) { writeFileSync(f, o); n++ }
}
console.log(n, 'files updated')
