/**
 * The JSON Schema a session's result must match (`--json-schema`, or an approval record's `outputSchema`):
 * read, checked against its draft's meta-schema and compiled with ajv (and ajv-formats), which load only
 * when a schema is given (a vendor module of their own: scripts/bundle.js). The schema becomes the
 * StructuredOutput tool's input_schema (tools/structured-output.ts), so its root must be an object, as
 * the Messages API requires of every tool's input.
 *
 * A schema's `pattern` and `patternProperties` run on text the model chooses, synchronously: on
 * JavaScript's backtracking engine `^(\w+\s?)*$` against 36 `a`s and a `!` pins a core for good. They run
 * on re2js instead (RE2: time linear in the text), and a pattern RE2 refuses (lookaround, backreferences)
 * makes the schema a usage error, before any request.
 */
import {createHash} from 'node:crypto'
import {readFile} from 'node:fs/promises'
import {createRequire} from 'node:module'

import {errorLine, usageError} from './errors.js'

/** A schema checked and compiled, with the digest an approval binds. */
export interface OutputSchema {
  /** The schema as given: what the model is shown as StructuredOutput's input_schema. */
  schema: Record<string, unknown>
  /** sha256 of its canonical JSON (keys sorted, no white space): the same schema however it was spelled. */
  sha256: string
  /** What is wrong with `value` against the schema, one line each; empty when it matches. */
  problems(value: unknown): string[]
}

/**
 * `--json-schema <json|@file>`: the schema as JSON text, or `@FILE` to read it from a file. Anything
 * wrong with it is a usage error (exit 2) naming `flag`, raised before any request.
 */
export async function outputSchemaArgument(value: string, flag = '--json-schema'): Promise<OutputSchema> {
  let text = value
  let label = flag
  if (value.startsWith('@')) {
    const file = value.slice(1)
    label = `${flag} ${value}`
    try {
      text = await readFile(file, 'utf8')
    } catch (error) {
      throw usageError(`${label}: cannot read ${file}: ${errorLine(error)}.`)
    }
  }

  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    throw usageError(`${label} is not JSON: ${errorLine(error)}.`, `Give the schema as JSON text, or @FILE to read it from a file.`)
  }

  return compileOutputSchema(parsed, label)
}

/**
 * A parsed schema, checked: a JSON object whose root is `type: "object"`, valid against its draft's
 * meta-schema (2020-12 unless `$schema` names draft-07 or draft-06), and compilable (its `$ref`s
 * resolve). `label` names where it came from in the usage error.
 */
export async function compileOutputSchema(schema: unknown, label: string): Promise<OutputSchema> {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) throw usageError(`${label} is not a JSON Schema: it must be a JSON object.`)
  const root = schema as Record<string, unknown>
  if (root.type !== 'object') {
    throw usageError(
      `${label}: the schema's root must be {"type": "object"}${root.type === undefined ? '' : `, not ${JSON.stringify(root.type)}`}: the model gives its result as a tool's input, which is an object.`,
      'Wrap the value in an object, e.g. {"type": "object", "properties": {"items": {...}}, "required": ["items"]}.',
    )
  }

  const ajv = await validatorFor(root)
  if (!ajv.validateSchema(root)) {
    throw usageError(`${label} is not a valid JSON Schema: ${describeErrors(ajv.errors ?? []).join('; ')}.`)
  }

  let check: ReturnType<typeof ajv.compile>
  try {
    check = ajv.compile(root)
  } catch (error) {
    if (error instanceof PatternRefused) throw usageError(`${label}: ${error.message}.`, 'Write the pattern without lookaround or backreferences.')
    throw usageError(`${label} is not a valid JSON Schema: ${errorLine(error)}.`)
  }

  return {
    problems(value) {
      return check(value) ? [] : describeErrors(check.errors ?? [])
    },
    schema: root,
    sha256: schemaDigest(root),
  }
}

/** sha256 of a schema's canonical JSON: keys sorted at every level, no white space. */
export function schemaDigest(schema: unknown): string {
  return createHash('sha256').update(canonicalJson(schema)).digest('hex')
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item)).join(',')}]`
  if (value === null || typeof value !== 'object') return JSON.stringify(value)
  const entries = Object.keys(value)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`)
  return `{${entries.join(',')}}`
}

interface SchemaError {
  instancePath: string
  message?: string
  params?: Record<string, unknown>
}

/** ajv's errors as lines a model (or a person) can act on: where, then what ("/count must be integer"). */
function describeErrors(errors: SchemaError[]): string[] {
  return errors.map((error) => {
    const where = error.instancePath || '(root)'
    const extra = typeof error.params?.additionalProperty === 'string' ? ` (${error.params.additionalProperty})` : ''
    const allowed = Array.isArray(error.params?.allowedValues) ? `: ${error.params.allowedValues.map((v) => JSON.stringify(v)).join(', ')}` : ''
    return `${where} ${error.message ?? 'is invalid'}${extra}${allowed}`
  })
}

/**
 * ajv for the schema's draft, with ajv-formats' formats. Loaded here, on first use: a session without a
 * schema never loads it. Each import names only what it means in the package and in the vendor module
 * the build makes of all three (scripts/bundle.js): `Ajv`, `Ajv2020`, and ajv-formats' default.
 */
async function validatorFor(schema: Record<string, unknown>) {
  const draft = typeof schema.$schema === 'string' && /draft-0[67]\/schema/.test(schema.$schema) ? 'draft-07' : '2020-12'
  const [formats, Validator] = await Promise.all([
    import('ajv-formats') as Promise<unknown> as Promise<{default: AddFormats | {default: AddFormats}}>,
    draft === 'draft-07' ? import('ajv').then((ajv) => ajv.Ajv) : import('ajv/dist/2020.js').then((ajv) => ajv.Ajv2020),
  ])
  // strict off: keywords ajv does not know (annotations, vendor extensions) are left alone, as the API leaves them.
  const ajv = new Validator({allErrors: true, code: {regExp: linearRegExp}, strict: false})
  // ajv-formats is CommonJS: node gives its module.exports (the plugin) as default, a bundler may give the exports object.
  const addFormats = typeof formats.default === 'function' ? formats.default : formats.default.default
  addFormats(ajv)
  return ajv
}

type AddFormats = (ajv: object) => unknown

/** The refusal of a pattern RE2 cannot run, named in the usage error ajv.compile's caller raises. */
class PatternRefused extends Error {}

/**
 * ajv's engine for `pattern` and `patternProperties` (its `code.regExp` option): re2js, which ajv asks
 * with the pattern and the `u` flag it would give RegExp, and which answers `test` as RegExp does (a
 * match anywhere). re2js is required here, on first use, as Grep's engine is (tools/search/linear-regex.ts).
 */
function linearRegExp(pattern: string): {test(text: string): boolean; toString(): string} {
  const {RE2JS} = createRequire(import.meta.url)('re2js') as typeof import('re2js')
  try {
    const regex = RE2JS.compile(pattern)
    // ajv keys its compiled patterns by toString(): each must name its own pattern, as a RegExp's does.
    return {test: (text) => regex.test(text), toString: () => `/${pattern}/`}
  } catch (error) {
    const reason = (error as Error).message.replace(/^error parsing regexp: /, '')
    throw new PatternRefused(
      `the pattern ${JSON.stringify(pattern)} cannot run on a linear-time engine (${reason}); wave runs schema patterns with RE2's syntax: no lookaround or backreferences`,
    )
  }
}

linearRegExp.code = 're2js'
