import writeFileAtomic from 'write-file-atomic'

/** How many leading bytes decide whether a file is binary (git and ripgrep look at a similar prefix). */
export const BINARY_SNIFF_BYTES = 8192

/** Share of undecodable characters above which bytes are treated as binary rather than damaged text. */
const MAX_INVALID_UTF8_RATIO = 0.1

/**
 * Whether bytes look binary: a NUL byte in the first 8 KB, or so many invalid UTF-8 sequences that the
 * text would be mostly replacement characters. A few stray Latin-1 bytes still count as text.
 */
export function looksBinary(bytes: Uint8Array): boolean {
  const sample = bytes.subarray(0, BINARY_SNIFF_BYTES)
  if (sample.includes(0)) return true
  // stream: true leaves a multi-byte character cut by the sample's end undecoded instead of invalid.
  const text = new TextDecoder('utf-8').decode(sample, {stream: true})
  if (text.length === 0) return false
  let invalid = 0
  for (const char of text) if (char === '\uFFFD') invalid++
  return invalid / text.length > MAX_INVALID_UTF8_RATIO
}

/** Decodes UTF-8 without ever failing: invalid sequences become U+FFFD. For display only. */
export function decodeForDisplay(bytes: Uint8Array): string {
  return new TextDecoder('utf-8').decode(bytes)
}

/**
 * Decodes bytes that are to be edited and written back, or returns undefined when they are not valid
 * UTF-8 (writing a lossy decoding back would corrupt the file). A byte order mark is kept as U+FEFF at
 * the start of the text, so that writing the text back keeps it.
 */
export function decodeForEditing(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder('utf-8', {fatal: true, ignoreBOM: true}).decode(bytes)
  } catch {
    return undefined
  }
}

type LineEnding = '\n' | '\r\n'

/** The file's line ending: CRLF when most of its line breaks are CRLF, else LF. */
export function detectLineEnding(text: string): LineEnding {
  let lf = 0
  let crlf = 0
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) {
    if (at > 0 && text[at - 1] === '\r') crlf++
    else lf++
  }

  return crlf > lf ? '\r\n' : '\n'
}

/** Rewrites every line break (LF or CRLF) in `text` as `ending`. */
export function withLineEnding(text: string, ending: LineEnding): string {
  return text.replaceAll(/\r?\n/g, ending)
}

/**
 * Replaces a file's content atomically (temporary file + rename), so a crash or a concurrent reader
 * never sees half a file. An existing file keeps its mode and owner; a new one gets the umask default.
 */
export async function writeTextFileAtomic(file: string, content: string): Promise<void> {
  await writeFileAtomic(file, content, {encoding: 'utf8'})
}
