/**
 * Agent Skills end to end: SKILL.md folders in the four places, listed where the model reads them (the
 * Skill tool's description), loaded with the Skill tool in a run and in plan mode, their scripts run
 * through Bash under the session's policy, and a malformed or duplicate skill warned, naming its file.
 */
import {existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import type {Sandbox} from '../support/cli.js'
import {type MessagesServer, planPathIn, type RecordedRequest, reply, toolResults, toolUse} from '../support/messages-server.js'
import {useScriptedSession, waveIn} from '../support/session.js'

let sandbox: Sandbox
let server: MessagesServer
useScriptedSession((session) => ({sandbox, server} = session))
const wave = waveIn(() => ({sandbox, server}))

function skill(dir: string, name: string, description: string, body: string, files: Record<string, string> = {}): string {
  const folder = path.join(dir, name)
  mkdirSync(folder, {recursive: true})
  writeFileSync(path.join(folder, 'SKILL.md'), `---\nname: ${name}\ndescription: ${description}\n---\n\n${body}\n`)
  for (const [file, content] of Object.entries(files)) writeFileSync(path.join(folder, file), content, {mode: 0o755})
  return folder
}

/** One skill in each of the four places. */
function skillsEverywhere(): Record<string, string> {
  return {
    'agents-lint': skill(path.join(sandbox.repo, '.agents', 'skills'), 'agents-lint', 'Lint the way this project does', '# Lint\n\nRun the linter.'),
    'claude-user': skill(path.join(sandbox.home, '.claude', 'skills'), 'claude-user', "The user's Claude Code skill", '# Mine'),
    deploy: skill(
      path.join(sandbox.repo, '.claude', 'skills'),
      'deploy',
      'Deploy the service to an environment',
      '# Deploy\n\nRun ./deploy.sh with the environment.',
    ),
    'wave-user': skill(path.join(sandbox.home, '.wave', 'skills'), 'wave-user', "The user's wave skill", '# Wave'),
  }
}

const skillTool = (request: RecordedRequest) => (request.body.tools as Array<{name: string; description: string}>).find((tool) => tool.name === 'Skill')

describe('skills', () => {
  it('skills from each place are listed in the Skill tool, shown by wave prompt and doctor, and loaded with Skill (body, folder, args)', async () => {
    const folders = skillsEverywhere()
    const prompt = await wave(['prompt', '--mode', 'run', '--json'])
    expect(prompt.code, prompt.stderr).toBe(0)
    const preview = JSON.parse(prompt.stdout)
    expect(preview.skills.map((s: {name: string}) => s.name).sort()).toEqual(Object.keys(folders).sort())
    const listed = preview.tools.find((tool: {name: string}) => tool.name === 'Skill')
    for (const name of Object.keys(folders)) expect(listed.description).toContain(`<name>\n${name}\n</name>`)
    expect(listed.input_schema.properties).toHaveProperty('skill')
    expect(listed.input_schema.properties).toHaveProperty('args')

    const doctor = JSON.parse((await wave(['doctor', '--offline', '--json'])).stdout)
    expect(doctor.checks.find((check: {name: string}) => check.name === 'skills').detail).toContain(`deploy (${path.join(folders.deploy, 'SKILL.md')})`)

    server.push(reply(toolUse('Skill', {args: 'staging', skill: 'deploy'})), reply('Deployed.'))
    const result = await wave(['run', '--task', 'Deploy to staging', '--mode', 'acceptEdits'])
    expect(result.code, result.stderr).toBe(0)
    expect(skillTool(server.messageRequests[0])?.description).toContain('Deploy the service to an environment')
    const [loaded] = toolResults(server.messageRequests[1])
    expect(loaded.is_error).toBeUndefined()
    expect(loaded.text).toBe(`Base directory for this skill: ${folders.deploy}\n\n# Deploy\n\nRun ./deploy.sh with the environment.\n\nARGUMENTS: staging`)
  })

  it("a skill's script runs through Bash under the session's policy: refused without a rule, run with one", async () => {
    const stamp = 'bash .claude/skills/stamp/stamp.sh'
    skill(path.join(sandbox.repo, '.claude', 'skills'), 'stamp', 'Stamp the build', `Run \`${stamp}\`.`, {'stamp.sh': '#!/bin/bash\necho stamped > STAMP\n'})
    const turns = () => [reply(toolUse('Skill', {skill: 'stamp'})), reply(toolUse('Bash', {command: stamp})), reply('Stamped.')]
    server.push(...turns())
    const refused = await wave(['run', '--task', 'Stamp it', '--mode', 'acceptEdits'])
    expect(refused.code, refused.stderr).toBe(0)
    expect(existsSync(path.join(sandbox.repo, 'STAMP'))).toBe(false)
    expect(toolResults(server.messageRequests[2])[0].text).toMatch(/^Permission denied/)

    server.push(...turns())
    const allowed = await wave(['run', '--task', 'Stamp it', '--mode', 'acceptEdits', '--allow', `Bash(${stamp})`])
    expect(allowed.code, allowed.stderr).toBe(0)
    expect(existsSync(path.join(sandbox.repo, 'STAMP'))).toBe(true)
  }, 60_000) // two sessions, each with a sandboxed command: slow on a loaded machine

  it("a user skill's folders are in the sandbox read-only: its scripts run, nothing can be written into them", async () => {
    const waveSkill = skill(path.join(sandbox.home, '.wave', 'skills'), 'stamp-user', 'Stamp as the user does', 'Run stamp.sh.', {
      'stamp.sh': '#!/bin/bash\necho "stamped by $(basename "$(dirname "$0")")" > STAMP\n',
    })
    const claudeSkill = skill(path.join(sandbox.home, '.claude', 'skills'), 'sign-user', 'Sign as the user does', 'Run sign.sh.', {
      'sign.sh': '#!/bin/bash\necho signed > SIGNED\n',
    })
    server.push(
      reply(
        toolUse('Bash', {command: `bash ${waveSkill}/stamp.sh && bash ${claudeSkill}/sign.sh`}),
        toolUse('Bash', {command: `echo evil > ${waveSkill}/evil.txt`}),
        toolUse('Bash', {command: `rm ${claudeSkill}/SKILL.md`}),
      ),
      reply('Done.'),
    )
    const result = await wave(['run', '--task', 'Stamp and sign', '--mode', 'bypassPermissions'])
    expect(result.code, result.stderr).toBe(0)
    // Control: the scripts ran, from where the Skill tool says the skills are.
    expect(readFileSync(path.join(sandbox.repo, 'STAMP'), 'utf8')).toBe('stamped by stamp-user\n')
    expect(readFileSync(path.join(sandbox.repo, 'SIGNED'), 'utf8')).toBe('signed\n')
    // Hostile: a write into a skill's folder fails with the file system's error; nothing changed on disk.
    const [, written, removed] = toolResults(server.messageRequests[1])
    expect(written.text).toContain('Read-only file system')
    expect(removed.text).toContain('Read-only file system')
    expect(existsSync(path.join(waveSkill, 'evil.txt'))).toBe(false)
    expect(existsSync(path.join(claudeSkill, 'SKILL.md'))).toBe(true)
  }, 60_000) // sandboxed commands: slow on a loaded machine

  it('a malformed or duplicate skill is a warning naming its file; the others load', async () => {
    const good = skill(path.join(sandbox.repo, '.claude', 'skills'), 'good', 'A good skill', '# Good')
    const broken = path.join(sandbox.repo, '.claude', 'skills', 'broken', 'SKILL.md')
    mkdirSync(path.dirname(broken), {recursive: true})
    writeFileSync(broken, '# No front matter here\n')
    const nameless = path.join(sandbox.repo, '.agents', 'skills', 'nameless', 'SKILL.md')
    mkdirSync(path.dirname(nameless), {recursive: true})
    writeFileSync(nameless, '---\ndescription: [unclosed\n---\nbody\n')
    skill(path.join(sandbox.repo, '.agents', 'skills'), 'good', 'The same name again', '# Again')
    server.push(reply('Nothing to do.'))
    const result = await wave(['run', '--task', 'Look around', '--mode', 'acceptEdits'])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toContain(`Skill ${broken} not loaded: it does not begin with YAML front matter`)
    expect(result.stderr).toContain(`Skill ${nameless} not loaded: its front matter is not YAML wave can read`)
    expect(result.stderr).toContain(
      `Skill ${path.join(sandbox.repo, '.agents', 'skills', 'good', 'SKILL.md')} not loaded: a skill named "good" is already loaded from ${path.join(good, 'SKILL.md')}`,
    )
    const listing = skillTool(server.messageRequests[0])?.description ?? ''
    expect(listing).toContain('<name>\ngood\n</name>')
    expect(listing).toContain('A good skill')
    expect(listing).not.toContain('The same name again')
  })

  it('skills load in plan mode: the Skill tool is offered and answers', async () => {
    skillsEverywhere()
    server.push(
      reply(toolUse('Skill', {skill: 'agents-lint'})),
      (request) => reply(toolUse('Write', {content: '# Plan\n\nLint first.\n', file_path: planPathIn(request)})),
      reply('Planned.'),
    )
    const result = await wave(['plan', '--task', 'Plan the lint fixes'])
    expect(result.code, result.stderr).toBe(0)
    expect(skillTool(server.messageRequests[0])).toBeDefined()
    expect(toolResults(server.messageRequests[1])[0].text).toContain('# Lint\n\nRun the linter.')
  })
})
