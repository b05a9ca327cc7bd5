import ts from 'typescript'
import {readFileSync, readdirSync, statSync} from 'node:fs'
import {join, dirname, resolve, relative} from 'node:path'
const root = process.argv[2] || 'src'
const files = []
const walk = d => { for (const f of readdirSync(d)) { const p = join(d,f); statSync(p).isDirectory() ? walk(p) : p.endsWith('.ts') && files.push(p) } }
walk(root)
const edges = {}
for (const f of files) {
  const info = ts.preProcessFile(readFileSync(f,'utf8'), true, true)
  edges[f] = info.importedFiles.map(i=>i.fileName).filter(s=>s.startsWith('.')).map(s=>relative('.', resolve(dirname(f), s.replace(/\.js$/,'.ts'))))
}
console.log(JSON.stringify(edges))
