/**
 * Real hook scripts on disk for the hooks e2e suites: executable files outside the repository, a Node
 * hook that logs every input it gets (one JSON line each) and answers with what its `main` returns,
 * and the settings shape that names them (Claude Code's `hooks` key).
 */
import {chmodSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import type {Sandbox} from './cli.js'
import type {RecordedRequest} from './messages-server.js'

export function writeJson(file: string, content: unknown): void {
  mkdirSync(path.dirname(file), {recursive: true})
  writeFileSync(file, JSON.stringify(content))
}

/** The user's settings file in the sandbox's HOME. */
export const userSettingsIn = (sandbox: Sandbox) => path.join(sandbox.home, '.wave', 'settings.json')

/** An executable hook script outside the repository; returns its path (the hook's command). */
export function script(sandbox: Sandbox, name: string, body: string): string {
  const file = path.join(sandbox.root, 'hooks', name)
  mkdirSync(path.dirname(file), {recursive: true})
  writeFileSync(file, body)
  chmodSync(file, 0o755)
  return file
}

/**
 * A Node hook: `main(input)` gets the parsed stdin (with `fs` in scope); what it returns is printed as
 * JSON (undefined: nothing). Each input is logged, with what `main` set on `input.seen`, to `<name>.log`.
 */
export function nodeHook(sandbox: Sandbox, name: string, main: string): string {
  return script(
    sandbox,
    name,
    `#!/usr/bin/env node
const fs = require('node:fs')
const input = JSON.parse(fs.readFileSync(0, 'utf8'))
const out = (${main})(input)
fs.appendFileSync(${JSON.stringify(path.join(sandbox.root, `${name}.log`))}, JSON.stringify(input) + '\\n')
if (out !== undefined) process.stdout.write(JSON.stringify(out))
`,
  )
}

/** Every input a nodeHook logged, in order. */
export const hookLog = (sandbox: Sandbox, name: string) =>
  readFileSync(path.join(sandbox.root, `${name}.log`), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line))

/** The `hooks` key with one command for one event. */
export const hooks = (event: string, command: string, extra: {matcher?: string; timeout?: number} = {}) => ({
  hooks: {
    [event]: [{...(extra.matcher ? {matcher: extra.matcher} : {}), hooks: [{command, type: 'command', ...(extra.timeout ? {timeout: extra.timeout} : {})}]}],
  },
})

/** The text of a request's last (user) message. */
export const lastUserText = (request: RecordedRequest): string => {
  const last = request.body.messages.at(-1)
  return typeof last.content === 'string' ? last.content : last.content.map((block: {text?: string}) => block.text ?? '').join('\n')
}
