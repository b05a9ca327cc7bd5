/**
 * What `wave tools` says of a tool in a mode: not a table of its own, but the policy (`offered`, the
 * same decision every call gets) asked about the sessions a mode can be in, so the listing cannot
 * drift from what the model is really offered.
 */
import {
  decide,
  offered,
  PLAN_MODE_REFUSALS,
  type PermissionMode,
  type PlanBash,
  type PolicyContext,
  parseRules,
  type Rules,
  type ToolIdentity,
} from './policy.js'
import {planModePolicy} from './plan-policy.js'

/**
 * - `yes`: offered in a headless session of the mode, under the settings' rules
 * - `planFileOnly`: offered in plan mode for the session's plan file, and for no other file
 * - `runTaskOnly`: offered only where the model may enter plan mode itself (`wave run --task`)
 * - `alreadyActive`: the mode is the one the tool would enter
 * - `withRule`: offered once an allow rule (`--allow`, or a settings file) permits it (or, for
 *   TaskOutput and TaskStop, permits Bash)
 * - `no`: never offered in the mode
 */
const OFFERS = ['yes', 'planFileOnly', 'runTaskOnly', 'alreadyActive', 'withRule', 'no'] as const
export type Offer = (typeof OFFERS)[number]

/** How `wave tools` prints each offer. */
export const OFFER_LABELS: Record<Offer, string> = {
  alreadyActive: 'already active',
  no: '-',
  planFileOnly: 'plan file only',
  runTaskOnly: 'run --task only',
  withRule: 'with a rule',
  yes: 'yes',
}

/** A placeholder plan file for the queries: plan mode always has one. */
const PLAN_FILE = '/plan.md'

/** What else of the session the offer depends on. */
interface OfferContext {
  /** Whether plan mode runs Bash here (absent: it does not). */
  planBash?: PlanBash
  /** The session is given a JSON Schema for its result (`--json-schema`): StructuredOutput is offered. */
  structuredOutput?: boolean
}

/**
 * Whether, and when, `tool` is offered in `mode`. `tools` is every tool listed: a rule naming each stands
 * for "some rule allows it".
 */
export function offerOf(mode: PermissionMode, tool: ToolIdentity, rules: Rules, tools: readonly ToolIdentity[], context: OfferContext = {}): Offer {
  const session: PolicyContext = {canEnterPlanMode: false, headless: true, mode, rules, structuredOutput: context.structuredOutput, workspaceRoot: '/'}
  const base = mode === 'plan' ? planModePolicy(session, {planBash: context.planBash, planFile: PLAN_FILE}) : session
  if (offered(base, tool)) {
    // Offered with a plan file, refused without one: the plan file is all it may touch.
    return mode === 'plan' && !offered({...base, planFile: undefined}, tool) ? 'planFileOnly' : 'yes'
  }

  if (decide(base, {tool}).reason === PLAN_MODE_REFUSALS.alreadyActive) return 'alreadyActive'
  if (offered({...base, canEnterPlanMode: true}, tool)) return 'runTaskOnly'
  // A rule is a tool's bare name: one a rule cannot spell (an odd plugin name) is left out, never guessed at.
  const allowEverything = parseRules([...new Set(tools.map((each) => each.name).filter((name) => /^[A-Za-z_][\w-]*$/.test(name)))])
  if (offered({...base, rules: {allow: [...rules.allow, ...allowEverything.allow], deny: rules.deny}}, tool)) return 'withRule'
  return 'no'
}
