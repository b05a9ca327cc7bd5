/**
 * How both forges read their options: a flag, else the forge's WAVE_<FORGE>_* variable (an empty value
 * counts as unset, as an Action input or CI variable left empty does), else the default.
 */
import {usageError} from '../base/errors.js'
import {networkHostProblem} from '../base/process/proxy.js'
import {loadSettings} from '../config/settings.js'
import {type BudgetCap, capOf, lowestCap} from '../model/budget.js'
import {ruleSchema} from '../policy/policy.js'

export const given = (value: string | undefined) => (value === undefined || value.trim() === '' ? undefined : value.trim())

export function optionReader<F extends object>(flags: F, env: NodeJS.ProcessEnv) {
  return {
    /** The flag's value, else the variable's; undefined when neither is given. */
    pick(flag: keyof F, variable: string): string | undefined {
      const value = flags[flag]
      return (typeof value === 'string' ? given(value) : undefined) ?? given(env[variable])
    },
    /** A switch: the flag given, else the variable (1, true, on, yes; 0, false, off, no; empty counts as unset), else off. */
    on(flag: keyof F, variable: string): boolean {
      const value = flags[flag]
      if (typeof value === 'boolean') return value
      const text = (given(env[variable]) ?? '').toLowerCase()
      if (text === '' || ['0', 'false', 'off', 'no'].includes(text)) return false
      if (['1', 'true', 'on', 'yes'].includes(text)) return true
      throw usageError(`${variable} must be true or false (got "${text.slice(0, 40)}").`)
    },
    oneOf<T extends string>(value: string, options: readonly T[], what: string): T {
      if ((options as readonly string[]).includes(value)) return value as T
      throw usageError(`${what} must be one of ${options.join(', ')} (got "${value}").`)
    },
    /** Permission rules: the flags given, else the variable's, one a line; each checked (exit 2). */
    allow(flagged: string[] | undefined, variable: string): string[] {
      const rules = flagged?.length
        ? flagged
        : (given(env[variable]) ?? '')
            .split('\n')
            .map((rule) => rule.trim())
            .filter(Boolean)
      for (const rule of rules) {
        const checked = ruleSchema.safeParse(rule)
        if (!checked.success) throw usageError(`Allow rule ${rule}: ${checked.error.issues[0].message}`)
      }

      return rules
    },
    /** Hosts the sandbox may reach: the flags given, else the variable's, separated by white space or commas; each checked (exit 2). */
    hosts(flagged: string[] | undefined, variable: string): string[] {
      const hosts = flagged?.length ? flagged : (given(env[variable]) ?? '').split(/[\s,]+/).filter(Boolean)
      for (const host of hosts) {
        const problem = networkHostProblem(host)
        if (problem) throw usageError(`${variable}: ${problem}.`)
      }

      return [...new Set(hosts)]
    },

    /**
     * The dollar cap of each plan and run: --max-budget-usd, else WAVE_MAX_BUDGET_USD, and the user
     * settings' maxBudgetUsd; the lowest of those given applies, naming where it was set. Undefined: no cap.
     */
    budget(flagged: number | undefined): BudgetCap | undefined {
      const variable = given(env.WAVE_MAX_BUDGET_USD)
      let budget = capOf(flagged, {kind: 'flag'})
      if (budget === undefined && variable !== undefined) {
        // What the user set it through: a wrapper may say (the Action: its max-budget-usd input); else the
        // variable itself, named as such, since a job's users raise it there, never with a flag of wave's.
        const setting = given(env.WAVE_MAX_BUDGET_USD_SETTING) ?? 'WAVE_MAX_BUDGET_USD'
        budget = {source: {kind: 'variable', setting}, usd: Number(variable)}
        if (!Number.isFinite(budget.usd) || budget.usd <= 0) throw usageError(`${setting} must be a positive number of US dollars (got "${variable}").`)
      }

      return lowestCap(budget, loadSettings(undefined).budget)
    },

    /**
     * What the job's cap is set through, as its users know it (the flag, the Action's max-budget-usd input,
     * WAVE_MAX_BUDGET_USD), whether or not it is set now: what a run stopped at the cap its plan was shown
     * says to raise (steps.ts, forgeRunHint).
     */
    budgetSetting(flagged: number | undefined): string {
      return flagged === undefined ? (given(env.WAVE_MAX_BUDGET_USD_SETTING) ?? 'WAVE_MAX_BUDGET_USD') : "the job's --max-budget-usd"
    },
  }
}
