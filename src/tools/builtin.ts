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
