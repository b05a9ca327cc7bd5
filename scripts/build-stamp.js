#!/usr/bin/env node
// The build's inputs as one digest, written beside the build (`write`, the build's last step) and compared
// (`check`, exit 1 when dist/ is missing or was built from other inputs). `npm test` builds only then, so
// `npm ci && npm test` builds once: npm ci's prepare builds, the tests use that build.
import {createHash} from 'node:crypto'
import {existsSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const stamp = join(root, 'dist/.build-inputs')

/** Every file the build reads from the repository: the sources, the build's scripts and configuration, the lockfile. */
function inputsDigest() {
  const walk = (dir) =>
    existsSync(join(root, dir))
      ? readdirSync(join(root, dir), {withFileTypes: true}).flatMap((entry) => (entry.isDirectory() ? walk(`${dir}/${entry.name}`) : [`${dir}/${entry.name}`]))
      : []
  const files = [...walk('src'), ...walk('scripts'), ...walk('bin'), 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json'].sort()
  const hash = createHash('sha256')
  for (const file of files) {
    if (!existsSync(join(root, file))) continue
    hash
      .update(`${file}\0`)
      .update(readFileSync(join(root, file)))
      .update('\0')
  }
  return hash.digest('hex')
}

const mode = process.argv[2]
if (mode === 'write') writeFileSync(stamp, `${inputsDigest()}\n`)
else if (mode === 'check') {
  const fresh = existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === inputsDigest()
  if (!fresh) process.stderr.write('dist/ is missing or stale: building.\n')
  process.exit(fresh ? 0 : 1)
} else {
  process.stderr.write('usage: build-stamp.js write|check\n')
  process.exit(2)
}
