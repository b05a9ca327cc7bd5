// One-off: moves src files to the layer folders and rewrites every relative import that points at them.
import {execFileSync} from 'node:child_process'
import {readFileSync, writeFileSync, readdirSync, statSync, existsSync, mkdirSync} from 'node:fs'
import {join, dirname, resolve, relative, posix} from 'node:path'
const map = JSON.parse(readFileSync(process.argv[2], 'utf8')) // old src-relative path (file or dir/) -> new
const root = process.cwd()
const BASE = process.argv[3] || 'src'
const srcFiles = execFileSync('git', ['ls-files', BASE], {encoding: 'utf8'}).trim().split('\n')
const moveOf = {}
for (const f of srcFiles) {
  const rel = f.slice(BASE.length + 1)
  let target
  if (map[rel]) target = map[rel]
  else for (const [k, v] of Object.entries(map)) if (k.endsWith('/') && rel.startsWith(k)) { const t = v + rel.slice(k.length); if (!target || k.length > target[1]) target = [t, k.length] }
  if (Array.isArray(target)) target = target[0]
  if (target && target !== rel) moveOf[BASE + '/' + rel] = BASE + '/' + target
}
const newPath = p => moveOf[p] ?? p
// dist path <-> src path
const toSrc = p => p.startsWith('dist/') ? 'src/' + p.slice(5).replace(/\.js$/, '.ts').replace(/\.d\.ts$/, '.ts') : p
const allFiles = execFileSync('git', ['ls-files', 'src', 'test', 'bench', 'scripts', 'bin'], {encoding: 'utf8'}).trim().split('\n').filter(f => /\.(ts|js|mjs|cjs)$/.test(f))
const re = /((?:from|import)\s*\(?\s*|load\()(['"])(\.{1,2}\/[^'"]+)\2/g
for (const file of allFiles) {
  const text = readFileSync(file, 'utf8')
  const fileNew = newPath(file)
  const out = text.replace(re, (m, pre, q, spec) => {
    const abs = relative(root, resolve(dirname(file), spec))
    let srcEq = abs
    let isDist = false
    if (abs.startsWith('dist/')) { isDist = true; srcEq = toSrc(abs) }
    else if (abs.startsWith('src/')) srcEq = abs.replace(/\.js$/, '.ts')
    const moved = moveOf[srcEq] ?? moveOf[abs]
    if (!moved && fileNew === file) return m
    let targetAbs = moved ? moved : srcEq
    if (isDist) targetAbs = 'dist/' + targetAbs.slice(4).replace(/\.ts$/, '.js')
    else if (abs.startsWith('src/') && abs.endsWith('.js')) targetAbs = targetAbs.replace(/\.ts$/, '.js')
    else if (!abs.startsWith('src/') && !abs.startsWith('dist/')) targetAbs = abs
    let r = posix.relative(dirname(fileNew), targetAbs)
    if (!r.startsWith('.')) r = './' + r
    return pre + q + r + q
  })
  if (out !== text) writeFileSync(file, out)
}
for (const [from, to] of Object.entries(moveOf)) {
  mkdirSync(dirname(to), {recursive: true})
  execFileSync('git', ['mv', from, to])
}
console.log(Object.keys(moveOf).length, 'moved')
