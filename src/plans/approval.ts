import {createHash} from 'node:crypto'
import {readFileSync} from 'node:fs'
import {execFile} from 'node:child_process'
import {userInfo} from 'node:os'
import path from 'node:path'
import {promisify} from 'node:util'

import writeFileAtomic from 'write-file-atomic'
import {z} from 'zod'

import {ExitCode, WaveError} from '../base/errors.js'
import {DEFAULT_SANDBOX, type SandboxChoice} from '../base/process/sandbox.js'
import {networkHostProblem} from '../base/process/proxy.js'
import {type JsonFileOptions, readJsonFile} from '../base/json.js'
import {schemaDigest} from '../base/json-schema.js'
import {type Decision, DECISIONS, decisionRecorded} from './lifecycle.js'
import {planNameOf, planSidecars} from './store.js'
import {EXECUTION_MODES, ruleSchema} from '../policy/policy.js'
import {protectedPathsWith} from '../policy/protected.js'
import {SCOPE_ENFORCEMENTS} from '../policy/scope.js'
import {gitEnvironment, SAFE_GIT_ARGS} from '../base/workspace/git-safety.js'
import {EFFORTS, MIN_THINKING_BUDGET} from '../model/reasoning.js'
import {type ConfiguredHook, describeHook, hooksDigest} from '../config/hooks.js'

const APPROVAL_VERSION = 1

const sha256 = z.lazy(() => z.string().regex(/^[0-9a-f]{64}$/i, 'a sha256 is 64 hex digits'))

const repositorySchema = z.lazy(() =>
  z.object({
    branch: z.string().nullable().optional(),
    dirty: z.boolean().optional(),
    head: z.string().nullable(),
  }),
)

const historyEntrySchema = z.lazy(() =>
  z.object({
    approver: z.string().optional(),
    decidedAt: z.string(),
    decision: z.enum(DECISIONS),
    feedback: z.string().nullable().optional(),
    planSha256: sha256,
  }),
)

/**
 * The OS sandbox the run's commands get (src/base/process/sandbox.ts). A record without it means on, with
 * no network: running unsandboxed is only ever asked for, and then recorded.
 */
const sandboxSchema = z.lazy(() =>
  z
    .object({
      enabled: z.boolean().default(true),
      /** All of the network. Applies only when `enabled`. */
      network: z.boolean().default(false),
      /**
       * The only hosts commands may reach (`--sandbox-network-allow`), through wave's filtering proxy
       * (base/process/proxy.ts): a host name or address, `*.` for its subdomains, `:port` for one port.
       */
      networkAllow: z
        .array(z.string().refine((host) => networkHostProblem(host) === undefined, {message: 'a network host is a host name such as registry.npmjs.org'}))
        .optional(),
    })
    .refine((sandbox) => !(sandbox.networkAllow?.length && (sandbox.network || !sandbox.enabled)), {
      message: 'networkAllow names the hosts of a sandbox without the whole network: not with network true or enabled false',
    }),
)

/** A scope path as the record holds it: relative to the workspace root, never climbing out of it. */
const scopePath = z.lazy(() =>
  z
    .string()
    .min(1)
    .refine(
      (entry) => !entry.startsWith('/') && !entry.startsWith('~') && !entry.split(/[\\/]/).includes('..'),
      'a scope path is relative to the workspace and stays inside it',
    ),
)

/**
 * The plan's `## Scope` (or the approver's `--scope`): the paths the run may change, and how it is held
 * to them. A record without it (written before plans were contracts) holds the run to no scope.
 */
const scopeSchema = z.lazy(() =>
  z.object({
    enforce: z.enum(SCOPE_ENFORCEMENTS).default('warn'),
    paths: z.array(scopePath),
  }),
)

/** The plan's `## Verification` (or `--verify`): commands wave runs in the run's sandbox when the model is done. The record is their grant. */
const verifySchema = z.lazy(() => z.array(z.object({command: z.string().trim().min(1, 'a check needs a command')})))

/**
 * How the approver wants the model to work (`wave approve --model/--effort/--thinking/--max-output-tokens/--fallback-model`):
 * part of what was approved, so a run uses it and refuses a flag that says otherwise. Only what the
 * approver set is here; a record without it (or without a field) leaves that to the run's flags and
 * settings.
 */
const modelSchema = z.lazy(() =>
  z.object({
    effort: z.enum(EFFORTS).optional(),
    /** `--fallback-model`: the model the run may go on with once its own is overloaded or unavailable. */
    fallbackModel: z.string().trim().min(1).optional(),
    maxOutputTokens: z.number().int().min(1).optional(),
    model: z.string().trim().min(1).optional(),
    thinking: z.union([z.enum(['adaptive', 'off']), z.number().int().min(MIN_THINKING_BUDGET)]).optional(),
  }),
)

/**
 * The JSON Schema the run's result must match (`wave approve --json-schema`): the schema, and the sha256
 * of its canonical JSON (base/json-schema.ts), which must agree. A run uses it, and refuses a
 * `--json-schema` of its own that differs (exit 2), as it refuses a model flag that contradicts `model`.
 */
const outputSchemaSchema = z.lazy(() =>
  z
    .object({
      schema: z.record(z.string(), z.unknown()),
      sha256,
    })
    .refine((bound) => schemaDigest(bound.schema) === bound.sha256.toLowerCase(), {
      message: 'the sha256 is not that of the schema',
      path: ['sha256'],
    }),
)

/**
 * The hooks in effect when the plan was approved (settings' `hooks`): their digest (config/hooks.ts),
 * and each one as the approver was shown it. A run whose hooks differ warns, and refuses under a strict scope.
 */
const hooksSchema = z.lazy(() =>
  z.object({
    digest: sha256,
    list: z.array(z.string()).default([]),
  }),
)

/**
 * A plan's units as the approval binds them (plans/units.ts): each runs as its own job (`wave run --unit`),
 * held to its paths (strict) and checks, within `budgetUsd` when the approver set `--unit-budget-usd`.
 */
const unitSchema = z.lazy(() =>
  z.object({
    budgetUsd: z.number().positive().optional(),
    name: z.string().regex(/^[A-Za-z0-9][\w.-]*$/, 'a unit name is letters, digits, -, _ and .'),
    paths: z.array(scopePath).min(1),
    verify: verifySchema.default([]),
  }),
)

/**
 * The approval record: written by `wave approve`, or by any tool that follows this schema (docs/reference.md
 * documents it). Only `version`, `decision` and `plan.sha256` are required.
 */
export const approvalRecordSchema = z.lazy(() =>
  z.object({
    allow: z.array(ruleSchema).default([]),
    approver: z.string().optional(),
    decidedAt: z.string().optional(),
    decision: z.enum(DECISIONS),
    feedback: z.string().nullable().optional(),
    history: z.array(historyEntrySchema).default([]),
    hooks: hooksSchema.optional(),
    mode: z.enum(EXECUTION_MODES).default('acceptEdits'),
    model: modelSchema.optional(),
    outputSchema: outputSchemaSchema.optional(),
    plan: z.object({name: z.string().optional(), sha256}),
    repository: repositorySchema.nullable().optional(),
    sandbox: sandboxSchema.default(DEFAULT_SANDBOX),
    scope: scopeSchema.optional(),
    verify: verifySchema.optional(),
    /**
     * When a run of this approval succeeded: the approval is spent, and the plan runs again only after a
     * new decision (which writes a record without it). Kept in the record, not only in the state beside
     * the plan, so that a plan copied elsewhere with its record after it ran does not run twice.
     */
    spentAt: z.string().optional(),
    /**
     * The dollar cap the approver was shown (the forge flow's --max-budget-usd, in the plan's comment): what
     * the approved run was held to. Absent, none was set.
     */
    maxBudgetUsd: z.number().positive().optional(),
    task: z.string().optional(),
    /** The plan's `## Units`, bound (absent: the plan runs as one job). */
    units: z.array(unitSchema).optional(),
    /**
     * The protected paths the approver was shown (policy/protected.ts): what no write of the run may
     * change unless `scope` names it plainly. A run adds the settings' to it, never takes one away;
     * absent, the defaults.
     */
    protectedPaths: z.array(scopePath).optional(),
    version: z.literal(APPROVAL_VERSION),
  }),
)

export type ApprovalRecord = z.infer<typeof approvalRecordSchema>

export const sha256Of = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

export const approvalPathFor = (planPath: string) => planSidecars(planPath).approval

/** Who decided: --approver, else the CI actor, else git's user.name, else the OS user. */
export async function defaultApprover(): Promise<string> {
  if (process.env.GITHUB_ACTOR) return process.env.GITHUB_ACTOR
  try {
    const {stdout} = await promisify(execFile)('git', [...SAFE_GIT_ARGS, 'config', 'user.name'], {env: gitEnvironment()})
    if (stdout.trim()) return stdout.trim()
  } catch {}

  try {
    return userInfo().username
  } catch {
    return 'unknown'
  }
}

/**
 * Reads and validates a record. A missing record and a malformed one are both "not approved" (exit 3),
 * each with its own line.
 */
export async function readApproval(file: string, planPath: string): Promise<ApprovalRecord> {
  const hint = `Approve it first: wave approve ${planPath}`
  return readJsonFile(file, approvalRecordSchema, {
    ...recordFileOptions(file),
    hint,
    missing: () => new WaveError(`No approval record for ${planPath} (looked for ${file}).`, ExitCode.notApproved, hint),
  })
}

const recordFileOptions = (file: string): JsonFileOptions => ({
  exitCode: ExitCode.notApproved,
  invalid: (problem, fault) =>
    fault === 'unreadable' ? `Cannot read the approval record ${file}: ${problem}.` : `Malformed approval record ${file}: ${problem}.`,
})

/** Loads the previous record at `file`, if a valid one is there, to carry its history forward. */
export function previousRecord(file: string): ApprovalRecord | undefined {
  try {
    return readJsonFile(file, approvalRecordSchema, recordFileOptions(file))
  } catch {
    return undefined
  }
}

export interface DecisionInput {
  planPath: string
  planBytes: Uint8Array
  decision: Decision
  mode: (typeof EXECUTION_MODES)[number]
  allow: string[]
  approver: string
  feedback?: string
  task?: string
  repository?: {head: string | null; branch?: string | null; dirty?: boolean} | null
  /** Default: enabled, no network. */
  sandbox?: SandboxChoice
  /** The contract the run is held to (contract.ts's bindContract); absent, none. */
  scope?: ApprovalRecord['scope']
  verify?: ApprovalRecord['verify']
  /** The approver's model settings; absent or empty, none is recorded. */
  model?: ApprovalRecord['model']
  /** `--json-schema` as the approver gives it: the run's result must match it; absent, none is bound. */
  outputSchema?: {schema: Record<string, unknown>; sha256: string}
  /** The hooks in effect as the approver decides (their digest is recorded); absent, none is recorded. */
  hooks?: readonly ConfiguredHook[]
  /** The dollar cap the approver was shown; absent, none. */
  maxBudgetUsd?: number
  /** The plan's units, bound (contract.ts's bindContract); absent or empty, the plan runs as one job. */
  units?: ApprovalRecord['units']
  /** The settings' protected paths, added to the defaults in the record (policy/protected.ts). */
  protectedPaths?: readonly string[]
  out?: string
}

/**
 * Whether the hooks a run is about to run are those the approval saw. Approved hooks are policy (a
 * formatter, a guard): a run whose hooks differ is refused (exit 4, before any model request), naming
 * what is missing and what was not approved, unless `allowDrift` (`wave run --allow-hook-drift`), which
 * runs it with a warning saying the same. A record without hooks saw none.
 */
export function checkApprovedHooks(
  record: ApprovalRecord,
  hooks: readonly ConfiguredHook[],
  file: string,
  drift: {allow?: boolean; warn: (message: string) => void},
): void {
  const approved = record.hooks?.digest ?? hooksDigest([])
  if (approved === hooksDigest(hooks)) return
  const message = `The hooks in effect differ from those approved in ${file}: ${hooksDifference(
    record.hooks?.list ?? [],
    hooks.map((hook) => describeHook(hook)),
  )}.`
  if (!drift.allow) {
    throw new WaveError(
      message,
      ExitCode.mismatch,
      "Restore the settings the plan was approved with (a project's hooks run only where its settings are trusted), approve the plan again to approve these hooks, or run with --allow-hook-drift.",
    )
  }

  drift.warn(`${message} The run goes on without the approved hooks (--allow-hook-drift).`)
}

/** What differs between the hooks approved and those in effect, each as describeHook names it. */
function hooksDifference(then: readonly string[], now: readonly string[]): string {
  const missing = then.filter((hook) => !now.includes(hook))
  const added = now.filter((hook) => !then.includes(hook))
  const parts = [
    missing.length > 0 ? `approved but not in effect: ${missing.join('; ')}` : '',
    added.length > 0 ? `in effect but not approved: ${added.join('; ')}` : '',
  ].filter(Boolean)
  // The same hooks by name, with another order or timeout: the digest binds both.
  if (parts.length === 0) return `the same hooks with another order or timeout (approved ${then.join('; ')}; now ${now.join('; ')})`
  return parts.join('; ')
}

/** The sha256 of the plan as it was last decided on (the record's newest decision), if the record at `file` has one. */
export function lastDecidedSha256(file: string): string | undefined {
  const record = previousRecord(file)
  return record?.history.at(-1)?.planSha256 ?? record?.plan.sha256
}

/**
 * Writes the record atomically; the history keeps every decision on this record, newest last. The
 * plan's state (lifecycle.ts) takes the decision as its status. Callers record a decision through
 * decision.ts's approvePlan, which also keeps the revision decided on.
 */
export async function writeDecision(input: DecisionInput): Promise<{path: string; record: ApprovalRecord}> {
  const file = input.out ?? approvalPathFor(input.planPath)
  const planSha = sha256Of(input.planBytes)
  const decidedAt = new Date().toISOString()
  const previous = previousRecord(file)
  const entry = {approver: input.approver, decidedAt, decision: input.decision, feedback: input.feedback ?? null, planSha256: planSha}
  const record: ApprovalRecord = {
    allow: input.allow,
    approver: input.approver,
    decidedAt,
    decision: input.decision,
    feedback: input.feedback ?? null,
    history: [...(previous?.history ?? []), entry],
    hooks: input.hooks ? {digest: hooksDigest(input.hooks), list: input.hooks.map((hook) => describeHook(hook))} : undefined,
    maxBudgetUsd: input.maxBudgetUsd,
    mode: input.mode,
    model: input.model && Object.values(input.model).some((value) => value !== undefined) ? input.model : undefined,
    outputSchema: input.outputSchema ? {schema: input.outputSchema.schema, sha256: input.outputSchema.sha256} : undefined,
    plan: {name: planNameOf(input.planPath), sha256: planSha},
    protectedPaths: input.decision === 'approved' ? protectedPathsWith(input.protectedPaths) : undefined,
    repository: input.repository ?? null,
    sandbox: input.sandbox ?? DEFAULT_SANDBOX,
    scope: input.scope,
    task: input.task,
    units: input.units?.length ? input.units : undefined,
    verify: input.verify,
    version: APPROVAL_VERSION,
  }
  try {
    await writeFileAtomic(file, JSON.stringify(record, null, 2) + '\n')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const why = code === 'EISDIR' ? 'it is a directory' : code === 'ENOENT' || code === 'ENOTDIR' ? 'its directory does not exist' : (error as Error).message
    throw new WaveError(`Cannot write the approval record ${file}: ${why}.`, ExitCode.usage)
  }

  // The state is told when the record it will see beside the plan was decided: it need not read back what was just written.
  await decisionRecorded(input.planPath, input.decision, path.resolve(file) === path.resolve(approvalPathFor(input.planPath)) ? decidedAt : undefined)
  return {path: file, record}
}

/**
 * Marks the approval in `file` spent by a successful run, if the file still holds the approval the run
 * used (a decision recorded meanwhile is left as it is). Throws when the file cannot be written.
 */
export async function markSpent(file: string, used: ApprovalRecord, at: string): Promise<void> {
  // Read once: the record checked is the record rewritten, with one field added (fields this schema does not know are kept).
  let raw: Record<string, unknown>
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'))
  } catch {
    return
  }

  const current = approvalRecordSchema.safeParse(raw)
  if (!current.success || current.data.decision !== 'approved' || current.data.decidedAt !== used.decidedAt || current.data.plan.sha256 !== used.plan.sha256)
    return
  await writeFileAtomic(file, JSON.stringify({...raw, spentAt: at}, null, 2) + '\n')
}

/** The checks `run` makes before any model request: approved (exit 3), and for these bytes (exit 4). */
export function assertApproved(record: ApprovalRecord, file: string, planPath: string, planBytes: Uint8Array): void {
  if (record.decision !== 'approved') {
    const by = record.approver ? ` by ${record.approver}` : ''
    const what = record.decision === 'rejected' ? 'was rejected' : 'has changes requested'
    const feedback = record.feedback ? `: ${record.feedback.split('\n')[0]}` : ''
    throw new WaveError(`The plan ${planPath} ${what}${by}${feedback}.`, ExitCode.notApproved, `Revise it, then approve it again (${file}).`)
  }

  const actual = sha256Of(planBytes)
  if (actual !== record.plan.sha256.toLowerCase()) {
    throw new WaveError(
      `The plan ${planPath} changed since it was approved (sha256 ${actual.slice(0, 12)}…, approved ${record.plan.sha256.slice(0, 12)}…).`,
      ExitCode.mismatch,
      `Review the change and approve it again: wave approve ${planPath}`,
    )
  }
}
