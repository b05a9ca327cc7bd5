import bash from './bash.js'
import edit from './edit.js'
import glob from './glob.js'
import grep from './grep.js'
import ls from './ls.js'
import read from './read.js'
import taskOutput from './task-output.js'
import taskStop from './task-stop.js'
import type {ToolPlugin} from './tool.js'
import webFetch from './web-fetch.js'
import write from './write.js'

/** The built-in file and shell tools, in the order the model is offered them. */
export const BUILTIN_TOOLS: ToolPlugin[] = [read, glob, grep, ls, write, edit, bash, taskOutput, taskStop, webFetch as ToolPlugin]

/**
 * The built-ins sent deferred (`defer_loading: true`, loaded by ToolSearch when the model needs one): every
 * request re-reads the tools' definitions, and these are rarely called, so their definitions stay out of
 * the cached prefix until a session uses them. Claude Code 2.1.332 defers the same ones. ExitPlanMode is
 * not among them: plan mode must end without a search turn (FR-006's reminder names it), nor are the tools
 * every session reads and writes with, Agent and Skill.
 */
export const DEFERRED_BUILTINS: ReadonlySet<string> = new Set(['LS', 'TaskOutput', 'TaskStop', 'WebFetch', 'TodoWrite', 'AskUserQuestion', 'EnterPlanMode'])
