import {randomBytes} from 'node:crypto'
import {constants, existsSync} from 'node:fs'
import {type FileHandle, lstat, mkdir, open, realpath, rename, rmdir, unlink} from 'node:fs/promises'
import path from 'node:path'

import {writeTextFileAtomic} from './files.js'
import {isInside} from './paths.js'

/**
 * Writes that land where the policy saw them land. The policy decides on a path's real path; between
 * that decision and the write, a directory on the way could be replaced by a symbolic link (a Bash
 * command running in the background can do it), and a write through the old spelling would follow it
 * out of the workspace or into `.git`.
 *
 * On Linux the write never follows a link at all: every directory from the allowed root down is opened
 * with O_NOFOLLOW, and the next one is reached through `/proc/self/fd/<fd>/<name>`, which names the
 * entry inside the directory already open (as openat(2) would), whatever its path has become. Missing
 * directories are created the same way, one level at a time. The file is written to a temporary name
 * in the open directory and renamed over the target there; a rename replaces a link, never follows it.
 * Elsewhere (no /proc) each created level is checked after mkdir and the directory's real path just
 * before an atomic write, which leaves a window of microseconds instead of none.
 */

/** Fails the write: the path no longer leads where it was checked, or is not a file that can be written. */
export class ConfinementError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ConfinementError'
  }
}

interface ConfinedWriteOptions {
  /** Create the missing directories between `root` and the file (Write); otherwise they must exist (Edit). */
  createDirectories?: boolean
}

/**
 * The directory a write to `real` is confined to: the workspace root for a path inside it, else the
 * file's own directory (the plan file, which the policy allows by its exact real path).
 */
export function writableRoot(workspaceRoot: string, real: string): string {
  return isInside(workspaceRoot, real) && real !== workspaceRoot ? workspaceRoot : path.dirname(real)
}

const PROC_FD = '/proc/self/fd'
const canOpenAt = process.platform === 'linux' && existsSync(PROC_FD)

/**
 * Replaces (or creates) `file`, a real path below `root`, with `content` (UTF-8), atomically, without
 * following any symbolic link below `root`. An existing file keeps its mode and, where permitted, owner.
 */
export async function writeFileWithin(root: string, file: string, content: string, options: ConfinedWriteOptions = {}): Promise<void> {
  if (file === root || !isInside(root, file)) throw new ConfinementError(`${file} is not below ${root}.`)
  const directories = path
    .relative(root, path.dirname(file))
    .split(path.sep)
    .filter((part) => part !== '')
  if (canOpenAt) {
    await writeThroughDescriptors(root, directories, path.basename(file), content, options)
  } else {
    await writeWithChecks(root, directories, file, content, options)
  }
}

async function writeThroughDescriptors(root: string, directories: string[], name: string, content: string, options: ConfinedWriteOptions): Promise<void> {
  let dir = await openDirectory(root, root)
  try {
    let shown = root
    for (const part of directories) {
      shown = path.join(shown, part)
      const entry = at(dir, part)
      if (options.createDirectories) {
        await mkdir(entry).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== 'EEXIST') throw error
        })
      }

      const next = await openDirectory(entry, shown)
      await dir.close()
      dir = next
    }

    const target = at(dir, name)
    const existing = await lstat(target).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined
      throw error
    })
    if (existing?.isSymbolicLink()) throw new ConfinementError(`${path.join(shown, name)} became a symbolic link after it was checked; nothing was written.`)
    if (existing && !existing.isFile()) throw new ConfinementError(`${path.join(shown, name)} is not a regular file; nothing was written.`)

    const temporary = at(dir, `.${name}.wave-${randomBytes(6).toString('hex')}`)
    const handle = await open(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o666)
    try {
      try {
        await handle.writeFile(content, 'utf8')
        if (existing) {
          await handle.chmod(existing.mode & 0o7777)
          await handle.chown(existing.uid, existing.gid).catch(() => {}) // Only root may give a file away.
        }

        await handle.sync()
      } finally {
        await handle.close()
      }

      await rename(temporary, target)
    } catch (error) {
      await unlink(temporary).catch(() => {})
      throw error
    }
  } finally {
    await dir.close()
  }
}

/** `name` inside the directory open as `dir`, whatever path leads to that directory now. */
function at(dir: FileHandle, name: string): string {
  return `${PROC_FD}/${dir.fd}/${name}`
}

async function openDirectory(spelled: string, shown: string): Promise<FileHandle> {
  try {
    return await open(spelled, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code !== 'ELOOP' && code !== 'ENOTDIR') throw error
    // Linux reports a link opened with O_DIRECTORY | O_NOFOLLOW as ENOTDIR or ELOOP: tell which it is.
    const link = await lstat(spelled).then(
      (info) => info.isSymbolicLink(),
      () => false,
    )
    throw new ConfinementError(
      link ? `${shown} became a symbolic link after it was checked; nothing was written.` : `${shown} is not a directory; nothing was written.`,
    )
  }
}

/** Without openat: create one level at a time, check each, check the parent's real path right before writing. */
async function writeWithChecks(root: string, directories: string[], file: string, content: string, options: ConfinedWriteOptions): Promise<void> {
  let dir = root
  for (const part of directories) {
    dir = path.join(dir, part)
    if (!options.createDirectories) continue
    let created = true
    await mkdir(dir).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error
      created = false
    })
    if ((await realpath(dir)) !== dir) {
      // Made through a link swapped in above it: take back the empty directory and stop.
      if (created) await rmdir(dir).catch(() => {})
      throw new ConfinementError(`${dir} no longer leads where it was checked; nothing was written.`)
    }
  }

  const parent = path.dirname(file)
  if ((await realpath(parent)) !== parent) throw new ConfinementError(`${parent} no longer leads where it was checked; nothing was written.`)
  const existing = await lstat(file).catch(() => undefined)
  if (existing?.isSymbolicLink()) throw new ConfinementError(`${file} became a symbolic link after it was checked; nothing was written.`)
  await writeTextFileAtomic(file, content)
}
