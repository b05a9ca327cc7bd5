/**
 * The plugin contract, as published: `import type {WaveToolsHook} from 'wave-cli'` in a plugin written
 * in TypeScript. Runtime values (zod, ToolError, defineTool) reach a plugin through the hook's options,
 * so that its schemas are built with wave's own zod; only types and the identity helper are exported.
 */
export type {PluginTool, WaveHooks, WaveToolsHook, WaveToolsHookOptions} from '../tools/sources/hook.js'
export {PLUGIN_ACCESS_CLASSES, TOOLS_HOOK, TOOLS_HOOK_API} from '../tools/sources/hook.js'
export {defineTool, type SessionControl, type ToolContext, ToolError, type ToolPlugin} from '../tools/tool.js'
export type {AccessClass, PolicyContext} from '../policy/policy.js'
export type {ResolvedPath} from '../base/workspace/paths.js'
