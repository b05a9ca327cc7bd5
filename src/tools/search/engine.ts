import {type Dirent, readdirSync, readFileSync} from 'node:fs'
import {availableParallelism} from 'node:os'
import path from 'node:path'
import {Worker} from 'node:worker_threads'
import ignore, {type Ignore} from 'ignore'

import {type BatchRequest, type BatchResponse, type ContentMatch, type ContentQuery, DEFERRED, keepFirstLines, Searcher} from './content.js'
import {isInside} from '../../base/workspace/paths.js'
import {globMatcher} from './glob-matcher.js'

export type {ContentMatch, ContentMode, ContentQuery} from './content.js'

// Glob and Grep over large trees. Everything per file is synchronous on purpose: a promise-based
// readdir, stat or readFile costs a trip through libuv's thread pool, which over 50,000 files was four
// times the work itself. The synchronous loops run in slices that yield to the event loop (so an abort
// or a progress line still gets through). Grep reads and matches (content.ts) while the crawl
// goes on, on the main thread and, for a big search, on worker threads too. See bench/RESULTS.md.

interface ListFilesOptions {
  /** A glob relative to `base` (tinyglobby's syntax, read as tinyglobby reads it: `src` means everything below src). Default: every file. */
  pattern?: string
  signal?: AbortSignal
  /** Called with the files each slice of the crawl finds, as it finds them (Grep searches while the crawl goes on). */
  onFiles?: (files: string[]) => void
}

// Git on Linux compares ignore patterns case-sensitively; macOS and Windows file systems fold case.
const IGNORE_CASE = process.platform === 'darwin' || process.platform === 'win32'

/** How long a synchronous loop runs before it yields to the event loop. */
const SLICE_MS = 10

/**
 * Absolute paths of the files below `base` that match `pattern`, leaving out what git would ignore:
 * `.gitignore` files from the workspace `root` down (nested ones apply to their own subtree and override
 * their parents), `root/.git/info/exclude`, and always `.git` itself. Ignored directories are pruned
 * while crawling, so a large `node_modules` costs nothing. Symbolic links are not followed or listed.
 *
 * A `base` that is itself ignored (say `node_modules/some-pkg`) was asked for on purpose: it is searched,
 * and only the ignore files found below it apply.
 */
export async function listFiles(root: string, base: string, options: ListFilesOptions = {}): Promise<string[]> {
  options.signal?.throwIfAborted()
  const glob = options.pattern === undefined ? undefined : compileGlob(options.pattern)
  if (glob?.empty) return []
  let frames = isInside(root, base) ? ancestorFrames(root, base) : withOwnRules(base, [])
  // The crawl starts at the pattern's literal directory prefix (`src/app` for `src/app/**/*.ts`),
  // applying the ignore files on the way down; a prefix inside an ignored directory finds nothing.
  let start = base
  let startRel = ''
  for (const segment of glob?.prefix ?? []) {
    if (isIgnored(frames, segment, true)) return []
    start = path.join(start, segment)
    startRel += `${segment}/`
    frames = withOwnRules(start, descend(frames, segment))
  }

  const crawler = new Crawler(frames, glob)
  return crawler.crawl(start, startRel, options.signal, options.onFiles)
}

// ---------------------------------------------------------------------------------------------- ignore rules

/** The rules of one ignore file, and the path from its directory to the directory being read. */
interface Frame {
  rules: Ignore
  /** The names the rules can have an opinion on; undefined when they are not simple enough to tell. */
  names?: NameFilter
  /** '' in the file's own directory, `a/b/` two levels below it. */
  prefix: string
}

/** Whether `name` (an entry of the directory the frames apply to) is ignored. Deepest rules decide first, as in git. */
function isIgnored(frames: Frame[], name: string, isDirectory: boolean): boolean {
  const suffix = isDirectory ? `${name}/` : name
  for (let i = frames.length - 1; i >= 0; i--) {
    const frame = frames[i]
    // Most entries match no rule at all: skip the library (and its per-path cache) for them.
    if (frame.names && !frame.names.mayMatch(name)) continue
    const result = frame.rules.test(frame.prefix + suffix)
    if (result.ignored) return true
    if (result.unignored) return false
  }

  return false
}

function descend(frames: Frame[], name: string): Frame[] {
  return frames.map((frame) => ({...frame, prefix: `${frame.prefix}${name}/`}))
}

/** `frames` plus `dir`'s own `.gitignore`, when it has one. */
function withOwnRules(dir: string, frames: Frame[], files = [path.join(dir, '.gitignore')]): Frame[] {
  const texts: string[] = []
  for (const file of files) {
    try {
      texts.push(readFileSync(file, 'utf8'))
    } catch {
      // Missing or unreadable: no rules from this file.
    }
  }

  if (texts.length === 0) return frames
  // Within one directory, later files take precedence: .gitignore overrides info/exclude.
  const rules = ignore({ignorecase: IGNORE_CASE})
  for (const text of texts) rules.add(text)
  return [...frames, {names: NameFilter.of(texts), prefix: '', rules}]
}

/**
 * The entry names a set of ignore rules can match, told from the rules' last path segments when each is
 * a plain name, `*suffix` or `prefix*` (as nearly all are: `node_modules/`, `*.log`, `/build`,
 * `npm-debug.log*`). A name outside them gets no opinion from the rules, so they need not be asked.
 */
class NameFilter {
  private constructor(
    private readonly names: Set<string>,
    private readonly prefixes: string[],
    private readonly suffixes: string[],
  ) {}

  /** The filter for these ignore files' texts, or undefined when a rule is not simple enough. */
  static of(texts: string[]): NameFilter | undefined {
    const names = new Set<string>()
    const prefixes: string[] = []
    const suffixes: string[] = []
    for (const text of texts) {
      for (const raw of text.replace(/^\uFEFF/, '').split('\n')) {
        let line = raw.trimEnd()
        if (line === '' || line.startsWith('#')) continue
        if (line.includes('\\') || /^\s/.test(line)) return undefined // escapes, leading blanks
        if (line.startsWith('!')) line = line.slice(1)
        if (line.endsWith('/')) line = line.slice(0, -1)
        let last = line.slice(line.lastIndexOf('/') + 1)
        if (IGNORE_CASE) last = last.toLowerCase()
        if (last === '' || /[?[\]]/.test(last)) return undefined
        const stars = last.split('*').length - 1
        if (stars === 0) names.add(last)
        else if (stars === 1 && last.startsWith('*')) suffixes.push(last.slice(1))
        else if (stars === 1 && last.endsWith('*')) prefixes.push(last.slice(0, -1))
        else return undefined
      }
    }

    return new NameFilter(names, prefixes, suffixes)
  }

  mayMatch(name: string): boolean {
    const key = IGNORE_CASE ? name.toLowerCase() : name
    if (this.names.has(key)) return true
    for (const suffix of this.suffixes) if (key.endsWith(suffix)) return true
    for (const prefix of this.prefixes) if (key.startsWith(prefix)) return true
    return false
  }
}

/**
 * The rules that apply to `base`'s entries: `root/.git/info/exclude`, then the `.gitignore` files from
 * `root` down to `base` itself. An ignored `base` was named on purpose: the ancestors' rules, which
 * would exclude all of it, are dropped, and only its own apply.
 */
function ancestorFrames(root: string, base: string): Frame[] {
  let frames = withOwnRules(root, [], [path.join(root, '.git', 'info', 'exclude'), path.join(root, '.gitignore')])
  if (base === root) return frames
  const segments = path.relative(root, base).split(path.sep)
  let dir = root
  let ignored = false
  for (const [index, segment] of segments.entries()) {
    if (index > 0) frames = withOwnRules(dir, frames)
    if (isIgnored(frames, segment, true)) ignored = true
    frames = descend(frames, segment)
    dir = path.join(dir, segment)
  }

  return withOwnRules(base, ignored ? [] : frames)
}

// ---------------------------------------------------------------------------------------------- globs

interface CompiledGlob {
  /** The pattern can match nothing (a lone negation). */
  empty: boolean
  /** Leading literal directory names: the crawl starts below them. */
  prefix: string[]
  /** Whether a path relative to the crawl's base matches. */
  match: (relative: string) => boolean
  /** Whether a directory (relative path, no trailing slash) at `depth` below the prefix may hold matches. */
  mayHold: (relative: string, depth: number) => boolean
}

/**
 * tinyglobby's reading of a pattern: a trailing `/` is dropped, a pattern not ending in `*` also matches
 * everything below what it names (`src` lists src/**), dotfiles match, paths use `/`.
 */
function compileGlob(pattern: string): CompiledGlob {
  const nothing = {empty: true, match: () => false, mayHold: () => false, prefix: []}
  if (pattern === '' || (pattern.startsWith('!') && !pattern.startsWith('!('))) return nothing
  let normalized = pattern.endsWith('/') ? pattern.slice(0, -1) : pattern
  if (!normalized.endsWith('*')) normalized += '/**'
  normalized = path.posix.normalize(normalized)
  const match = globMatcher(normalized, {posix: true})
  const parts = normalized.split('/')

  // Only simple patterns are pruned directory by directory; braces, extglobs and escapes (which may
  // span or hide a `/`) are matched file by file after a full crawl below the prefix.
  const simple = !/[{}()\\]/.test(normalized) && !/\[[^\]]*\//.test(normalized) && !normalized.startsWith('!')
  // Not the name before a trailing `**`, which also matches itself (`README.md` → `README.md/**` names a
  // file as well as a directory); the directory-by-directory pruning below still covers it.
  const prefix: string[] = []
  const prefixMax = parts.at(-1) === '**' ? parts.length - 2 : parts.length - 1
  if (simple) {
    while (prefix.length < prefixMax && isLiteral(parts[prefix.length]) && parts[prefix.length] !== '.') {
      prefix.push(parts[prefix.length])
    }
  }

  const rest = parts.slice(prefix.length)
  const stop = rest.findIndex((part) => part.includes('**'))
  const levels = simple ? rest.slice(0, stop === -1 ? rest.length - 1 : stop).map((part) => globMatcher(part, {posix: true})) : undefined
  const mayHold = (relative: string, depth: number): boolean => {
    if (!levels) return true
    if (depth >= levels.length) return stop !== -1
    return levels[depth](relative.slice(relative.lastIndexOf('/') + 1))
  }

  return {empty: false, match, mayHold, prefix}
}

function isLiteral(part: string): boolean {
  return part !== '' && part !== '..' && !/[*?[\]{}()!+@\\]/.test(part)
}

// ---------------------------------------------------------------------------------------------- crawl

interface PendingDir {
  /** Absolute path. */
  dir: string
  /** Relative to the crawl's base, with a trailing `/` ('' for the base). */
  relative: string
  /** Depth below the glob prefix (0 for the start directory). */
  depth: number
  /** Rules from the directories above (and its own, once ownLoaded). */
  frames: Frame[]
  /** Whether `frames` already hold the directory's own `.gitignore` (the start directory's do). */
  ownLoaded: boolean
}

class Crawler {
  private readonly files: string[] = []

  constructor(
    private readonly frames: Frame[],
    private readonly glob: CompiledGlob | undefined,
  ) {}

  async crawl(start: string, startRel: string, signal?: AbortSignal, onFiles?: (files: string[]) => void): Promise<string[]> {
    const pending: PendingDir[] = [{depth: 0, dir: start, frames: this.frames, ownLoaded: true, relative: startRel}]
    let reported = 0
    while (pending.length > 0) {
      const deadline = performance.now() + SLICE_MS
      do this.visit(pending.pop()!, pending)
      while (pending.length > 0 && performance.now() < deadline)
      if (onFiles && this.files.length > reported) {
        onFiles(this.files.slice(reported))
        reported = this.files.length
      }

      if (pending.length > 0) await yieldToEventLoop()
      signal?.throwIfAborted()
    }

    return this.files
  }

  private visit({depth, dir, frames, ownLoaded, relative}: PendingDir, pending: PendingDir[]): void {
    let entries: Dirent[]
    try {
      entries = readdirSync(dir, {withFileTypes: true})
    } catch {
      return // Vanished or unreadable since it was listed: nothing to find there.
    }

    if (!ownLoaded && entries.some((entry) => entry.name === '.gitignore' && entry.isFile())) frames = withOwnRules(dir, frames)
    const glob = this.glob
    for (const entry of entries) {
      const {name} = entry
      // `.git` is a directory in a repository and a file in a worktree or submodule: never search either.
      if (name === '.git') continue
      if (entry.isDirectory()) {
        if (isIgnored(frames, name, true)) continue
        if (glob && !glob.mayHold(relative + name, depth)) continue
        pending.push({depth: depth + 1, dir: dir + path.sep + name, frames: descend(frames, name), ownLoaded: false, relative: `${relative}${name}/`})
      } else if (entry.isFile()) {
        // The pattern first: it is the cheaper test, and most files fail it.
        if (glob && !glob.match(relative + name)) continue
        if (isIgnored(frames, name, false)) continue
        this.files.push(dir + path.sep + name)
      }
      // Symbolic links, sockets and the like are neither followed nor listed.
    }
  }
}

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => {
    setImmediate(resolve)
  })
}

// ---------------------------------------------------------------------------------------------- content search

interface SearchFilesOptions {
  signal?: AbortSignal
  /** Checked for each file with a match before it is kept (and counted). */
  readable?: (file: string) => Promise<boolean>
  /**
   * Only the first this many files (in path order) can be shown: the others are counted and dropped as
   * the search goes, so memory stays bounded however much matches. Default: keep all.
   */
  keepFiles?: number
  /** Content mode: likewise for the first this many matching lines. */
  keepLines?: number
}

export interface SearchResult {
  /** The files kept (see keepFiles, keepLines), sorted by path. */
  matches: ContentMatch[]
  /** Files with a match, kept or not. */
  files: number
  /** Matching lines (1 per file in files_with_matches mode), kept or not. */
  lines: number
}

/**
 * Below this many files a search runs on the main thread alone: starting a worker (~50–100 ms of CPU)
 * would cost more than it takes over. A pool already started serves searches from WARM_THRESHOLD files.
 */
const WORKER_THRESHOLD = 8000
const WARM_THRESHOLD = 2000
/** Files per message to a worker. */
const BATCH_FILES = 256
/** At most this many worker threads (besides the main thread). */
const MAX_WORKERS = 3
/**
 * The most matching work the main thread takes on for one file, in bytes times regex instructions. RE2 is
 * linear in the text but not in the pattern: when a pattern's DFA grows too big it falls back to its NFA,
 * measured at up to ~13 ns per byte and instruction (`(?:a|b|...|ab|bc|cd){1000}!`, 10,003 instructions:
 * 130 µs a byte). At this budget that is ~0.2 s at worst, while a common pattern (20 to 50 instructions)
 * still matches files up to several hundred KB here. A costlier file goes to a worker thread, which an
 * interruption or a time limit can stop: the main thread stays free to answer a signal.
 */
const MAIN_THREAD_COST = 2 ** 24

/** Files waiting to be searched: the crawl pushes them as it finds them, the searchers take them in batches. */
export class FileQueue {
  private files: string[] = []
  private head = 0
  private closed = false
  private waiters: Array<() => void> = []
  /** Files pushed so far. */
  total = 0

  push(files: string[]): void {
    for (const file of files) this.files.push(file)
    this.total += files.length
    this.wake()
  }

  /** No more files will come. */
  close(): void {
    this.closed = true
    this.wake()
  }

  /** Resolves once `count` files were pushed, or the queue is closed. */
  async reached(count: number): Promise<void> {
    while (this.total < count && !this.closed) await this.wait()
  }

  /** Up to `count` files: waits while fewer are queued and more may come; undefined once all are taken. */
  async take(count: number): Promise<string[] | undefined> {
    while (this.files.length - this.head < count && !this.closed) await this.wait()
    if (this.head === this.files.length) return undefined
    const taken = this.files.slice(this.head, this.head + count)
    this.head += taken.length
    if (this.head > 4096 && this.head * 2 > this.files.length) {
      this.files = this.files.slice(this.head)
      this.head = 0
    }

    return taken
  }

  private wait(): Promise<void> {
    return new Promise((resolve) => {
      this.waiters.push(resolve)
    })
  }

  private wake(): void {
    for (const resolve of this.waiters.splice(0)) resolve()
  }
}

/** Searches `files` (an array, or a queue that a crawl is still filling). */
export async function searchFiles(files: string[] | FileQueue, query: ContentQuery, options: SearchFilesOptions = {}): Promise<SearchResult> {
  const {signal} = options
  signal?.throwIfAborted()
  let queue: FileQueue
  if (Array.isArray(files)) {
    queue = new FileQueue()
    queue.push(files)
    queue.close()
  } else {
    queue = files
  }

  const kept = new KeptMatches(options.keepFiles, options.keepLines)
  const accept = async (found: ContentMatch[]) => {
    if (options.readable && found.length > 0) {
      const readable = await Promise.all(found.map((match) => options.readable!(match.file)))
      found = found.filter((_, index) => readable[index])
    }

    kept.add(found)
  }

  // A worker pays for itself from several thousand files on; until the crawl has found that many, wait.
  // The main thread searches too, between the crawl's slices: on two cores, it and one worker.
  const warm = SearchPool.started()
  const threshold = warm ? WARM_THRESHOLD : WORKER_THRESHOLD
  await queue.reached(threshold)
  const pool = queue.total >= threshold ? SearchPool.shared() : undefined
  const searcher = new Searcher()
  // Files too costly to match on the main thread (see MAIN_THREAD_COST), for a worker.
  const deferred = new FileQueue()
  const onMainThread = async () => {
    for (let batch = await queue.take(BATCH_FILES); batch; batch = await queue.take(BATCH_FILES)) {
      for (let at = 0; at < batch.length; ) {
        const deadline = performance.now() + SLICE_MS
        const found: ContentMatch[] = []
        do {
          const file = batch[at++]
          const match = searcher.search(file, query, MAIN_THREAD_COST)
          if (match === DEFERRED) deferred.push([file])
          else if (match) found.push(match)
        } while (at < batch.length && performance.now() < deadline)
        await accept(found)
        await yieldToEventLoop()
        signal?.throwIfAborted()
      }
    }
  }

  await Promise.all([onMainThread(), pool?.run(queue, query, accept, options.keepLines, signal)])
  deferred.close()
  if (deferred.total > 0) {
    // Under a TypeScript loader (the tests) there is no worker: the main thread matches them after all.
    const helper = SearchPool.shared(1)
    if (helper) await helper.run(deferred, query, accept, options.keepLines, signal)
    else await accept(((await deferred.take(deferred.total)) ?? []).map((file) => searcher.search(file, query)).filter((match) => match !== undefined))
  }

  return kept.result()
}

/** The matches so far and their totals, dropping what can no longer be shown. */
class KeptMatches {
  private matches: ContentMatch[] = []
  private files = 0
  private lines = 0
  /** Lines held in `matches`. */
  private held = 0

  constructor(
    private readonly keepFiles = Number.POSITIVE_INFINITY,
    private readonly keepLines = Number.POSITIVE_INFINITY,
  ) {}

  add(found: ContentMatch[]): void {
    for (const match of found) {
      this.matches.push(match)
      this.files++
      this.lines += match.count
      this.held += match.lines.length
    }

    if (this.matches.length > 2 * this.keepFiles + 1000 || this.held > 4 * this.keepLines + 1000) this.compact()
  }

  result(): SearchResult {
    this.compact()
    return {files: this.files, lines: this.lines, matches: this.matches}
  }

  /** Sorts by path, keeps the first keepFiles files, and the files holding the first keepLines lines. */
  private compact(): void {
    this.held = keepFirstLines(this.matches, this.keepLines)
    let lines = 0
    let kept = 0
    while (kept < this.matches.length && kept < this.keepFiles && (lines < this.keepLines || this.keepLines === Number.POSITIVE_INFINITY)) {
      lines += this.matches[kept].lines.length
      kept++
    }

    if (kept < this.matches.length) this.matches.length = kept
  }
}

// ---------------------------------------------------------------------------------------------- workers

/**
 * The worker's own module, dist/tools/search/content.js. This code also runs bundled into a command's
 * bundle (dist/bundles/commands/*.cjs), where import.meta.url is the command's door, dist/commands/*.js
 * (scripts/bundle.js), from where the same file is spelled through the parent directory.
 */
const WORKER_MODULE = new URL(import.meta.url.includes('/commands/') ? '../tools/search/content.js' : './content.js', import.meta.url)

/**
 * Worker threads that search batches of files beside the main thread, one per further core (at most
 * three; WAVE_SEARCH_THREADS=n sets n, 0 for none but the one that takes files too costly for the main
 * thread, see MAIN_THREAD_COST), started on the first big search and kept for the next
 * ones; unref'd when idle, so they never keep the process alive. Only from the compiled module: under a
 * TypeScript loader (the tests) searches run on the main thread alone.
 */

class SearchPool {
  private static instance?: SearchPool
  private readonly workers: Worker[] = []
  private nextId = 0
  /** Searches running. */
  private active = 0
  private readonly waiting = new Map<number, {resolve: (matches: ContentMatch[]) => void; reject: (error: Error) => void}>()

  static started(): boolean {
    return SearchPool.instance !== undefined
  }

  /** The pool, started if need be with at least `minimum` workers (files the main thread defers need one even when WAVE_SEARCH_THREADS=0). */
  static shared(minimum = 0): SearchPool | undefined {
    if (!import.meta.url.endsWith('.js')) return undefined
    const setting = process.env.WAVE_SEARCH_THREADS
    // The main thread is one of the searchers: the pool adds one worker per further core.
    const size = Math.max(minimum, Math.min(MAX_WORKERS, setting && /^\d+$/.test(setting) ? Number(setting) : availableParallelism() - 1))
    if (size < 1) return undefined
    SearchPool.instance ??= new SearchPool(size)
    return SearchPool.instance
  }

  private constructor(size: number) {
    for (let i = 0; i < size; i++) {
      const worker = new Worker(WORKER_MODULE, {workerData: {waveSearchWorker: true}})
      worker.unref()
      worker.on('message', (response: BatchResponse) => this.settle(response))
      worker.on('error', (error) => this.fail(error))
      worker.on('exit', () => this.fail(new Error('a search worker stopped')))
      this.workers.push(worker)
    }
  }

  /** Hands batches to the workers, at most two in flight each, and accepts results in arrival order. */
  async run(queue: FileQueue, query: ContentQuery, accept: (found: ContentMatch[]) => Promise<void>, keepLines?: number, signal?: AbortSignal): Promise<void> {
    const perWorker = async (worker: Worker) => {
      for (let batch = await queue.take(BATCH_FILES); batch; batch = await queue.take(BATCH_FILES)) {
        signal?.throwIfAborted()
        await accept(await this.send(worker, {files: batch, id: this.nextId++, keepLines, query}))
      }
    }

    // An interruption or a time limit stops a batch in the middle: a worker busy matching is terminated
    // (V8 stops even a regex mid-run), and the search fails with the signal's reason at once.
    const onAbort = () => this.fail(signal?.reason instanceof Error ? signal.reason : new Error('The search was interrupted.'))
    signal?.throwIfAborted()
    signal?.addEventListener('abort', onAbort, {once: true})
    // Referenced while a search runs: an idle pool must not keep the process alive, a busy one must.
    if (this.active++ === 0) for (const worker of this.workers) worker.ref()
    try {
      await Promise.all(this.workers.flatMap((worker) => [perWorker(worker), perWorker(worker)]))
    } catch (error) {
      if (signal?.aborted) this.dispose()
      throw signal?.aborted ? signal.reason : error
    } finally {
      signal?.removeEventListener('abort', onAbort)
      if (--this.active === 0) for (const worker of this.workers) worker.unref()
    }
  }

  private send(worker: Worker, request: BatchRequest): Promise<ContentMatch[]> {
    return new Promise((resolve, reject) => {
      this.waiting.set(request.id, {reject, resolve})
      worker.postMessage(request)
    })
  }

  private settle(response: BatchResponse): void {
    const waiter = this.waiting.get(response.id)
    if (!waiter) return
    this.waiting.delete(response.id)
    if (response.error === undefined) waiter.resolve(response.matches ?? [])
    else waiter.reject(new Error(response.error))
  }

  private fail(error: Error): void {
    for (const waiter of this.waiting.values()) waiter.reject(error)
    this.waiting.clear()
    this.dispose()
  }

  private dispose(): void {
    if (SearchPool.instance === this) SearchPool.instance = undefined
    for (const worker of this.workers.splice(0)) {
      worker.removeAllListeners('exit')
      void worker.terminate()
    }
  }
}
