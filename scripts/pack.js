#!/usr/bin/env node
// `npm run pack`: the package as it is published, a tarball of the files package.json's `files` names
// (npm's own selection) with the published manifest, which has no scripts: the repository's `prepare`
// (the build, which `npm ci` in a clone runs) is nothing an installed package runs, and npm lists it
// among a package's install scripts. The release workflow publishes this tarball.
//
//   node scripts/pack.js [--destination DIR] [--json]
//
// stdout: the tarball's path (with --json, npm's description of it: files, sizes, integrity).
// Needs the build (dist/); the manifest in the repository is left untouched.
import {PROJECT_ROOT, packTarball, scriptOptions} from './tarball.js'

const options = scriptOptions('pack', 'node scripts/pack.js [--destination DIR] [--json]', {
  destination: {default: PROJECT_ROOT, type: 'string'},
  json: {default: false, type: 'boolean'},
})

let packed
try {
  packed = packTarball(options.destination)
} catch (error) {
  console.error(`pack: ${error.message.split('\n')[0]}`)
  process.exit(error.exitCode ?? 1)
}

process.stdout.write(options.json ? `${JSON.stringify(packed, null, 2)}\n` : `${packed.tarball}\n`)
console.error(
  `pack: ${packed.filename}: ${packed.entryCount} files, ${(packed.size / 1e6).toFixed(1)} MB packed, ${(packed.unpackedSize / 1e6).toFixed(1)} MB unpacked`,
)
