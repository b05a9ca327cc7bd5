#!/usr/bin/env node
// Lists the exports of src/ that no other file of src/ names (git's pathspec `*` crosses folders: `scripts/*.js` is every
// script, where `scripts/**/*.js` missed the top-level ones such as scripts/bundle.js): `none` (nothing else names it: drop the
// `export`, or the code when the module does not use it either) and `tests` (only tests, bench or scripts
// do). By name, so a word that merely appears elsewhere counts as a use: it can miss an unused export,
// never call a used one unused. Default exports (oclif's commands and hooks) are left out.
//
//   node scripts/unused-exports.js            # every row
//   node scripts/unused-exports.js --none     # only what nothing else names
import {execFileSync} from 'node:child_process'
import {readFileSync} from 'node:fs'

import {parseSync} from 'oxc-parser'

const files = execFileSync('git', ['ls-files', 'src/*.ts', 'test/*.ts', 'bench/*.js', 'scripts/*.js', 'bin/*.js'], {encoding: 'utf8'}).trim().split('\n')
const text = Object.fromEntries(files.map((file) => [file, readFileSync(file, 'utf8')]))
const rows = []
for (const file of files.filter((name) => name.startsWith('src/') && !name.endsWith('.d.ts'))) {
  // What the module itself declares and exports (not re-exports, not its default).
  const names = parseSync(file, text[file])
    .module.staticExports.flatMap((exported) => exported.entries)
    .filter((entry) => !entry.moduleRequest && entry.exportName.kind === 'Name')
    .map((entry) => entry.exportName.name)
  for (const name of names) {
    const word = new RegExp(`\\b${name}\\b`)
    const users = files.filter((other) => other !== file && word.test(text[other]))
    if (users.some((user) => user.startsWith('src/'))) continue
    rows.push(`${users.length > 0 ? 'tests' : 'none'}\t${file}\t${name}${users.length > 0 ? `\t${users.slice(0, 3).join(', ')}` : ''}`)
  }
}

const shown = process.argv.includes('--none') ? rows.filter((row) => row.startsWith('none')) : rows
console.log(shown.sort().join('\n'))
console.error(`${shown.length} export(s)`)
