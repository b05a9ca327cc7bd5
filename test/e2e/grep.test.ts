import {mkdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import type {Sandbox} from '../support/cli.js'
import {useScriptedSession, waveIn} from '../support/session.js'
import {type MessagesServer, planPathIn, reply, toolResults, toolUse} from '../support/messages-server.js'

let sandbox: Sandbox
let server: MessagesServer
useScriptedSession((session) => ({sandbox, server} = session))
const wave = waveIn(() => ({sandbox, server}))

describe("Grep with Claude Code's inputs, in a session", () => {
  it('shows context, pages on with offset to the end, filters by type and matches across lines', async () => {
    // 300 files holding a match each, and one whose match spans two lines.
    mkdirSync(path.join(sandbox.repo, 'many'))
    for (let i = 0; i < 300; i++) writeFileSync(path.join(sandbox.repo, 'many', `f${String(i).padStart(3, '0')}.txt`), 'marker\n')
    writeFileSync(path.join(sandbox.repo, 'src', 'props.ts'), 'export interface Props {\n  name: string\n}\n')

    server.push(
      reply(
        toolUse('Grep', {'-C': 1, output_mode: 'content', path: 'src', pattern: 'greet\\(', type: 'ts'}),
        toolUse('Grep', {path: 'many', pattern: 'marker'}),
        toolUse('Grep', {pattern: 'Props \\{\\n\\s+name'}),
        toolUse('Grep', {multiline: true, pattern: 'Props \\{\\n\\s+name'}),
      ),
      (request) => {
        // The model takes the offset the first page names.
        const next = /pass offset: (\d+)/.exec(toolResults(request)[1].text)
        return reply(toolUse('Grep', {offset: Number(next?.[1]), path: 'many', pattern: 'marker'}))
      },
      (request) => reply(toolUse('Write', {content: '# Plan\n\nNothing to change.\n', file_path: planPathIn(request)})),
      reply('Planned.'),
    )
    const result = await wave(['plan', '--task', 'Look at greet'])
    expect(result.stderr).not.toMatch(/Error/)
    expect(result.code).toBe(0)

    const [context, firstPage, lineByLine, multiline] = toolResults(server.messageRequests[1]).map((r) => r.text)
    // ripgrep's -C 1 over the TypeScript files: matches with ':' and context lines with '-', groups split by '--'.
    expect(context).toBe(
      [
        'src/app.ts-2-',
        "src/app.ts:3:console.log(greet('world'))",
        '--',
        'src/util.ts:1:export function greet(name: string): string {',
        'src/util.ts-2-  return `hello ${name}`',
      ].join('\n'),
    )
    const first = firstPage.split('\n')
    expect(first).toHaveLength(251)
    expect(first[0]).toBe('many/f000.txt')
    expect(first[250]).toBe('(more: showing files 1-250 of 300; pass offset: 250 for the next page, or narrow the pattern, path, glob or type)')
    expect(lineByLine).toBe('No files found')
    expect(multiline).toBe('src/props.ts')

    // The second page: the 50 files left, not the first page again, and no note: it is the last.
    const second = toolResults(server.messageRequests[2])[0].text.split('\n')
    expect(second).toHaveLength(50)
    expect(second[0]).toBe('many/f250.txt')
    expect(second.at(-1)).toBe('many/f299.txt')
  })
})
