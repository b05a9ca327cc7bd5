import {parseRules, type PermissionMode} from '../../../src/policy/policy.js'
import {dispatch, type ToolCallOutcome} from '../../../src/tools/dispatch.js'
import {builtinRegistry} from '../../../src/tools/registry.js'

export interface RuleSet {
  allow?: string[]
  deny?: string[]
}

/**
 * One tool call through the real dispatcher, as a headless session in `mode` with these rules would make
 * it in the workspace `root`: validation, the policy (shell analysis included), the tool itself, with
 * Bash in its default sandbox.
 */
export async function callTool(
  root: string,
  mode: PermissionMode,
  rules: RuleSet,
  name: string,
  input: Record<string, unknown>,
  sandbox?: {enabled: boolean; network: boolean},
): Promise<ToolCallOutcome> {
  const refuse = async (): Promise<string> => {
    throw new Error('session control is not available in these tests')
  }

  return dispatch(
    {id: 'call-1', input, name},
    {
      policy: {headless: true, mode, rules: parseRules(rules.allow, rules.deny), workspaceRoot: root},
      registry: builtinRegistry(),
      sandbox,
      session: {enterPlanMode: refuse, exitPlanMode: refuse},
      signal: new AbortController().signal,
    },
  )
}
