import {mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {WaveError} from '../../../src/base/errors.js'
import {modelFrom} from '../../../src/model/table.js'
import {plansDir} from '../../../src/plans/store.js'
import {decide, parseRules} from '../../../src/policy/policy.js'
import {analyseShell} from '../../../src/policy/shell.js'
import {
  assertHomeOutsideWorkspace,
  loadSettings,
  mergeSettings,
  parseSettings,
  projectSettingsPath,
  type Settings,
  type SettingsFlags,
  type SettingsLayer,
  userSettingsPath,
} from '../../../src/config/settings.js'

const USER = '/home/u/.wave/settings.json'
const PROJECT = '/work/repo/.wave/settings.json'
const user = (settings: Settings): SettingsLayer => ({file: USER, scope: 'user', settings})
const project = (settings: Settings): SettingsLayer => ({file: PROJECT, scope: 'project', settings})

describe('precedence', () => {
  type Row = [string, SettingsLayer[], SettingsFlags, Partial<ReturnType<typeof mergeSettings>>]
  const rows: Row[] = [
    ['nothing', [], {}, {allow: [], deny: [], files: [], mcpServers: {}, plugins: {}}],
    ['the user file alone', [user({model: 'user-model'})], {}, {files: [USER], model: 'user-model'}],
    [
      'a trusted project file beats the user file',
      [user({model: 'user-model'}), project({model: 'project-model'})],
      {trustProject: true},
      {model: 'project-model'},
    ],
    [
      'layer order does not matter',
      [project({model: 'project-model'}), user({model: 'user-model'})],
      {trustProject: true},
      {files: [USER, PROJECT], model: 'project-model'},
    ],
    [
      "an untrusted project's model, window and prices are ignored (they decide what the user pays), its instructions used",
      [
        user({model: 'user-model'}),
        project({contextWindow: 5000, instructions: 'Be brief.', model: 'project-model', prices: {m: {cacheRead: 0, cacheWrite: 0, input: 0, output: 0}}}),
      ],
      {},
      {
        ignored: [expect.stringMatching(/: model and contextWindow and prices ignored, since project settings are not trusted/)],
        instructions: ['Be brief.'],
        model: 'user-model',
      },
    ],
    [
      "an untrusted project's sandbox.tmpSize is ignored; the user's applies",
      [user({sandbox: {tmpSize: '64MiB'}}), project({sandbox: {tmpSize: '64GiB'}})],
      {},
      {ignored: [expect.stringMatching(/sandbox\.tmpSize ignored/)], sandboxTmpSize: 64 * 1024 ** 2},
    ],
    ['a flag beats both files', [user({model: 'user-model'}), project({model: 'project-model'})], {model: 'flag-model'}, {model: 'flag-model'}],
    ["a project without a model keeps the user's", [user({model: 'user-model'}), project({})], {}, {model: 'user-model'}],
    [
      'rules add up: user, trusted project, flags',
      [
        user({permissions: {allow: ['Bash(npm test:*)'], deny: ['Read(./.env)']}}),
        project({permissions: {allow: ['WebFetch(domain:docs.example.com)'], deny: ['Bash(rm:*)']}}),
      ],
      {allow: ['Edit'], trustProject: true},
      {allow: ['Bash(npm test:*)', 'WebFetch(domain:docs.example.com)', 'Edit'], deny: ['Read(./.env)', 'Bash(rm:*)']},
    ],
    [
      'an untrusted project grants nothing, but its deny rules apply',
      [
        user({permissions: {allow: ['Bash(npm test:*)']}}),
        project({mcpServers: {evil: {command: 'sh', type: 'stdio'}}, permissions: {allow: ['Bash'], deny: ['Bash(rm:*)']}}),
      ],
      {},
      {
        allow: ['Bash(npm test:*)'],
        deny: ['Bash(rm:*)'],
        ignored: [expect.stringMatching(/allow rules \(Bash\) and mcpServers \(evil\) ignored, since project settings are not trusted/)],
        mcpServers: {},
      },
    ],
    [
      'the user file can trust project settings',
      [user({trustProjectSettings: true}), project({permissions: {allow: ['Edit']}})],
      {},
      {allow: ['Edit'], ignored: []},
    ],
    [
      'repeated rules appear once',
      [user({permissions: {allow: ['Edit']}}), project({permissions: {allow: ['Edit']}})],
      {allow: ['Edit'], trustProject: true},
      {allow: ['Edit']},
    ],
    [
      "a trusted project server replaces the user's of the same name",
      [
        user({mcpServers: {docs: {command: 'user-docs', type: 'stdio'}, tickets: {type: 'http', url: 'https://t.example.com/mcp'}}}),
        project({mcpServers: {docs: {args: ['--ro'], command: 'project-docs', type: 'stdio'}}}),
      ],
      {trustProject: true},
      {
        mcpServers: {
          docs: {args: ['--ro'], command: 'project-docs', scope: 'project', type: 'stdio'},
          tickets: {scope: 'user', type: 'http', url: 'https://t.example.com/mcp'},
        },
      },
    ],
    ['plugins: the project overrides per plugin', [user({plugins: {a: false, b: true}}), project({plugins: {a: true}})], {}, {plugins: {a: true, b: true}}],
    ['plansDirectory: relative to the user file', [user({plansDirectory: 'my-plans'})], {}, {plansDirectory: '/home/u/.wave/my-plans'}],
    ['plansDirectory: absolute', [user({plansDirectory: '/srv/plans'})], {}, {plansDirectory: '/srv/plans'}],
  ]

  it.each(rows)('%s', (_name, layers, flags, expected) => {
    expect(mergeSettings(layers, flags)).toMatchObject(expected)
  })

  it('an untrusted project sets neither contextWindow nor prices', () => {
    const merged = mergeSettings([project({contextWindow: 5000, prices: {m: {cacheRead: 0, cacheWrite: 0, input: 0, output: 0}}})])
    expect(merged.contextWindow).toBeUndefined()
    expect(merged.prices).toBeUndefined()
  })

  it('a deny rule from any file beats an allow rule from any other, or a flag', () => {
    const merged = mergeSettings(
      [user({permissions: {deny: ['WebFetch(domain:example.com)']}}), project({permissions: {allow: ['WebFetch(domain:example.com)']}})],
      {
        allow: ['WebFetch'],
        trustProject: true,
      },
    )
    const rules = parseRules(merged.allow, merged.deny)
    const call = {input: {url: 'https://docs.example.com/'}, tool: {access: 'network' as const, name: 'WebFetch'}}
    expect(decide({headless: true, mode: 'plan', planFile: '/p.md', rules, workspaceRoot: '/w'}, call).decision).toBe('deny')
    expect(
      decide({headless: true, mode: 'plan', planFile: '/p.md', rules, workspaceRoot: '/w'}, {...call, input: {url: 'https://example.org/'}}).decision,
    ).toBe('allow')
  })

  it.each<[string, string | undefined, string | undefined, string | undefined, string]>([
    ['the flag first', 'flag', 'env', 'settings', 'flag'],
    ['then WAVE_MODEL', undefined, 'env', 'settings', 'env'],
    ['then the settings', undefined, undefined, 'settings', 'settings'],
    ['then the default', undefined, undefined, undefined, 'claude-sonnet-5-5'],
  ])('model: %s', (_name, flag, env, fromSettings, expected) => {
    const saved = process.env.WAVE_MODEL
    if (env === undefined) delete process.env.WAVE_MODEL
    else process.env.WAVE_MODEL = env
    try {
      expect(modelFrom(flag, fromSettings)).toBe(expected)
    } finally {
      if (saved === undefined) delete process.env.WAVE_MODEL
      else process.env.WAVE_MODEL = saved
    }
  })
})

describe('validation', () => {
  // [name, text, scope, what the message must say after "Invalid settings file <file>: "]
  const rows: Array<[string, string, 'project' | 'user', RegExp]> = [
    ['not JSON', '{"model": ', 'user', /not valid JSON/],
    ['not an object', '[]', 'user', /expected object/],
    ['an unknown setting', '{"modle": "x"}', 'user', /^modle: unknown setting/],
    ['an unknown permissions key', '{"permissions": {"defaultMode": "plan"}}', 'user', /^permissions\.defaultMode: unknown setting/],
    ['a model that is not a string', '{"model": 5}', 'user', /^model: .*expected string/],
    ['an empty model', '{"model": "  "}', 'user', /^model: must not be empty/],
    ['allow is not a list', '{"permissions": {"allow": "Bash"}}', 'project', /^permissions\.allow: .*expected array/],
    ['a bad allow rule', '{"permissions": {"allow": ["Edit", "Bash("]}}', 'project', /^permissions\.allow\[1\]: Invalid permission rule "Bash\("/],
    [
      'a bad deny rule',
      '{"permissions": {"deny": ["Read()"]}}',
      'user',
      /^permissions\.deny\[0\]: Invalid permission rule "Read\(\)": the specifier in \(\) is empty/,
    ],
    ['a server with neither command nor url', '{"mcpServers": {"docs": {"args": []}}}', 'user', /^mcpServers\.docs\.command: .*expected string/],
    ['a server with a bad url', '{"mcpServers": {"docs": {"url": "ftp://x"}}}', 'project', /^mcpServers\.docs\.url: must be an http/],
    [
      'a server with an unknown type',
      '{"mcpServers": {"docs": {"type": "sse", "url": "http://x"}}}',
      'user',
      /^mcpServers\.docs(\.type)?: type must be "stdio"/,
    ],
    ['a server with an unknown field', '{"mcpServers": {"docs": {"command": "x", "cmd": "y"}}}', 'user', /^mcpServers\.docs\.cmd: unknown setting/],
    ['a server env that is not strings', '{"mcpServers": {"docs": {"command": "x", "env": {"A": 1}}}}', 'user', /^mcpServers\.docs\.env\.A: .*expected string/],
    ['a server name that cannot make tool names', '{"mcpServers": {"my docs": {"command": "x"}}}', 'user', /^mcpServers\.my docs: server names are letters/],
    ['plugins that are not booleans', '{"plugins": {"wave-plugin-x": "yes"}}', 'user', /^plugins\.wave-plugin-x: .*expected boolean/],
    ['plansDirectory in a project file', '{"plansDirectory": "plans"}', 'project', /^plansDirectory: can be set only in the user settings file/],
    ['trustProjectSettings in a project file', '{"trustProjectSettings": true}', 'project', /^trustProjectSettings: can be set only in the user settings file/],
  ]

  it.each(rows)('%s', (_name, text, scope, expected) => {
    let error: unknown
    try {
      parseSettings(text, '/x/settings.json', scope)
    } catch (caught) {
      error = caught
    }

    expect(error).toBeInstanceOf(WaveError)
    const {exitCode, message} = error as WaveError
    expect(exitCode).toBe(2)
    expect(message.startsWith('Invalid settings file /x/settings.json: ')).toBe(true)
    expect(message.slice('Invalid settings file /x/settings.json: '.length)).toMatch(expected)
  })

  it.each<[string, string, Settings]>([
    ['an empty file', '', {}],
    ['an empty object', '{}', {}],
    [
      'a full user file',
      JSON.stringify({
        $schema: 'https://example.com/wave-settings.json',
        mcpServers: {
          docs: {args: ['server.js'], command: 'node', env: {TOKEN: '${DOCS_TOKEN}'}},
          tickets: {headers: {authorization: 'Bearer ${T}'}, url: 'https://t.example.com/mcp'},
        },
        model: 'claude-opus-4-5',
        permissions: {allow: ['Bash(npm test:*)', 'WebFetch(domain:docs.example.com)'], deny: ['Read(./.env)']},
        plansDirectory: '~/plans',
        plugins: {'wave-plugin-wordcount': true},
      }),
      {
        $schema: 'https://example.com/wave-settings.json',
        mcpServers: {
          docs: {args: ['server.js'], command: 'node', env: {TOKEN: '${DOCS_TOKEN}'}, type: 'stdio'},
          tickets: {headers: {authorization: 'Bearer ${T}'}, type: 'http', url: 'https://t.example.com/mcp'},
        },
        model: 'claude-opus-4-5',
        permissions: {allow: ['Bash(npm test:*)', 'WebFetch(domain:docs.example.com)'], deny: ['Read(./.env)']},
        plansDirectory: '~/plans',
        plugins: {'wave-plugin-wordcount': true},
      },
    ],
  ])('accepts %s', (_name, text, expected) => {
    expect(parseSettings(text, '/x/settings.json', 'user')).toEqual(expected)
  })
})

describe('files', () => {
  let root: string
  let saved: string | undefined

  beforeEach(() => {
    root = realpathSync(mkdtempSync(path.join(tmpdir(), 'wave-settings-')))
    mkdirSync(path.join(root, 'home'))
    mkdirSync(path.join(root, 'repo', '.wave'), {recursive: true})
    saved = process.env.WAVE_HOME
    process.env.WAVE_HOME = path.join(root, 'home')
  })

  afterEach(() => {
    if (saved === undefined) delete process.env.WAVE_HOME
    else process.env.WAVE_HOME = saved
    rmSync(root, {force: true, recursive: true})
  })

  it('reads $WAVE_HOME/settings.json and <workspace>/.wave/settings.json', () => {
    const repo = path.join(root, 'repo')
    expect(userSettingsPath()).toBe(path.join(root, 'home', 'settings.json'))
    expect(projectSettingsPath(repo)).toBe(path.join(repo, '.wave', 'settings.json'))
    writeFileSync(userSettingsPath(), JSON.stringify({model: 'u', permissions: {allow: ['Edit']}}))
    writeFileSync(projectSettingsPath(repo), JSON.stringify({model: 'p', permissions: {deny: ['Bash']}}))
    expect(loadSettings(repo, {allow: ['Write'], trustProject: true})).toMatchObject({
      allow: ['Edit', 'Write'],
      deny: ['Bash'],
      files: [userSettingsPath(), projectSettingsPath(repo)],
      model: 'p',
    })
    expect(loadSettings(undefined)).toMatchObject({files: [userSettingsPath()], model: 'u'})
  })

  it("reads the hooks of Claude Code's .claude/settings.json, then .claude/settings.local.json, as project files: only when trusted", () => {
    const repo = path.join(root, 'repo')
    const claude = path.join(repo, '.claude')
    mkdirSync(claude)
    const hook = (command: string) => ({hooks: {PostToolUse: [{hooks: [{command, type: 'command'}]}]}})
    writeFileSync(userSettingsPath(), JSON.stringify(hook('user')))
    writeFileSync(projectSettingsPath(repo), JSON.stringify(hook('wave')))
    writeFileSync(path.join(claude, 'settings.json'), JSON.stringify({...hook('shared'), permissions: {allow: ['Bash']}}))
    writeFileSync(path.join(claude, 'settings.local.json'), JSON.stringify({...hook('local'), env: {A: '1'}}))
    const trusted = loadSettings(repo, {trustProject: true})
    expect(trusted.hooks.map((h) => [h.command, h.scope, h.file])).toEqual([
      ['user', 'user', userSettingsPath()],
      ['wave', 'project', projectSettingsPath(repo)],
      ['shared', 'project', path.join(claude, 'settings.json')],
      ['local', 'project', path.join(claude, 'settings.local.json')],
    ])
    // Claude Code's permissions are read as its users write them (issue 47): allow rules where trusted.
    expect(trusted.allow).toEqual(['Bash'])
    const untrusted = loadSettings(repo, {trustProject: false})
    expect(untrusted.hooks.map((h) => h.command)).toEqual(['user'])
    expect(untrusted.allow).toEqual([])
    expect(untrusted.ignored).toContain(
      `${path.join(claude, 'settings.local.json')}: hooks (PostToolUse "local") ignored, since project settings are not trusted (set "trustProjectSettings": true in ${userSettingsPath()} or WAVE_TRUST_PROJECT_SETTINGS=1)`,
    )
  })

  it("reads Claude Code's permissions: deny and ask always, allow only trusted; what wave cannot honour is named, a deny widened to its tool (issue 47)", async () => {
    const repo = path.join(root, 'repo')
    mkdirSync(path.join(repo, '.claude'))
    const claude = path.join(repo, '.claude', 'settings.json')
    const local = path.join(repo, '.claude', 'settings.local.json')
    writeFileSync(
      claude,
      JSON.stringify({
        permissions: {allow: ['Bash(npm test:*)', 'Bash(npm test:*:x)'], ask: ['Bash(git push:*)'], defaultMode: 'acceptEdits', deny: ['Bash(curl:*)']},
      }),
    )
    writeFileSync(local, JSON.stringify({permissions: {deny: ['Read(./.env)', 'WebFetch(https://x.io)']}}))
    const untrusted = loadSettings(repo, {trustProject: false})
    expect(untrusted.deny).toEqual(['Bash(curl:*)', 'Read(./.env)', 'WebFetch'])
    expect(untrusted.ask).toEqual(['Bash(git push:*)'])
    expect(untrusted.allow).toEqual([])
    expect(untrusted.ignored).toContainEqual(
      expect.stringContaining(`${claude}: allow rules (Bash(npm test:*)) ignored, since project settings are not trusted`),
    )
    expect(untrusted.unhonoured).toEqual([
      `${claude}: permissions.defaultMode is not honoured: a run's mode is the approval's (or --mode)`,
      expect.stringMatching(/^.*settings\.json: the allow rule Bash\(npm test:\*:x\) is not honoured \(/),
      expect.stringMatching(/settings\.local\.json: the deny rule WebFetch\(https:\/\/x\.io\) is honoured as WebFetch, all of it \(/),
    ])
    expect(loadSettings(repo, {trustProject: true}).allow).toEqual(['Bash(npm test:*)'])
    // What the policy makes of them: the deny holds, the ask refuses headless, a command beside them runs (control).
    const rules = parseRules(['Bash'], untrusted.deny, untrusted.ask)
    const bash = async (command: string) =>
      decide(
        {headless: true, mode: 'acceptEdits', rules, workspaceRoot: repo},
        {input: {command}, shell: await analyseShell(command), tool: {access: 'execute', name: 'Bash'}},
      )
    expect((await bash('curl https://x.io')).reason).toContain('Bash(curl:*)')
    expect(await bash('git push origin main')).toMatchObject({decision: 'deny', reason: expect.stringContaining('ask rule Bash(git push:*)')})
    expect((await bash('git status')).decision).toBe('allow')
    // A deny rule naming no tool cannot be honoured in any form: the file is refused.
    writeFileSync(local, JSON.stringify({permissions: {deny: ['(curl)']}}))
    expect(() => loadSettings(repo)).toThrow(/the deny rule \(curl\) names no tool wave can honour/)
  })

  it('treats missing files as empty, and names a bad one', () => {
    const repo = path.join(root, 'repo')
    expect(loadSettings(repo)).toMatchObject({allow: [], files: []})
    writeFileSync(projectSettingsPath(repo), '{"permissions": {"allow": [1]}}')
    expect(() => loadSettings(repo)).toThrow(
      `Invalid settings file ${projectSettingsPath(repo)}: permissions.allow[0]: Invalid input: expected string, received number.`,
    )
  })

  it('names a settings path that is a directory', () => {
    mkdirSync(userSettingsPath())
    expect(() => loadSettings(undefined)).toThrow(/settings\.json: it is a directory/)
  })

  it('moves the plans directory with the user file only', () => {
    expect(plansDir()).toBe(path.join(root, 'home', 'plans'))
    writeFileSync(userSettingsPath(), JSON.stringify({plansDirectory: 'elsewhere'}))
    expect(plansDir()).toBe(path.join(root, 'home', 'elsewhere'))
    writeFileSync(userSettingsPath(), JSON.stringify({plansDirectory: path.join(root, 'abs')}))
    expect(plansDir()).toBe(path.join(root, 'abs'))
  })
})

describe('assertHomeOutsideWorkspace', () => {
  let root: string
  let repo: string

  beforeEach(() => {
    root = realpathSync(mkdtempSync(path.join(tmpdir(), 'wave-home-')))
    repo = path.join(root, 'repo')
    mkdirSync(path.join(repo, '.wave'), {recursive: true})
    mkdirSync(path.join(root, 'home'))
    // Links that make a home look elsewhere than it is.
    symlinkSync(path.join(repo, '.wave'), path.join(root, 'home-link'))
    symlinkSync(repo, path.join(root, 'repo-link'))
  })

  afterEach(() => {
    rmSync(root, {force: true, recursive: true})
  })

  const inside = /^WAVE_HOME .* lies inside the workspace /
  const contains = /^The workspace .* lies inside WAVE_HOME /
  it.each<[string, (r: string) => string, (r: string) => string, RegExp | undefined]>([
    ['a home beside the workspace', (r) => `${r}/repo`, (r) => `${r}/home`, undefined],
    ['a home that does not exist yet, beside it', (r) => `${r}/repo`, (r) => `${r}/new/home`, undefined],
    ['a home whose name shares a prefix', (r) => `${r}/repo`, (r) => `${r}/repo-home`, undefined],
    ["the repository's own .wave", (r) => `${r}/repo`, (r) => `${r}/repo/.wave`, inside],
    ['the workspace itself', (r) => `${r}/repo`, (r) => `${r}/repo`, inside],
    ['a missing directory deep inside', (r) => `${r}/repo`, (r) => `${r}/repo/a/b/c`, inside],
    ['a link outside that leads into .wave', (r) => `${r}/repo`, (r) => `${r}/home-link`, inside],
    ['a missing home below such a link', (r) => `${r}/repo`, (r) => `${r}/home-link/x/y`, inside],
    ['a relative spelling that climbs back in', (r) => `${r}/repo`, (r) => `${r}/home/../repo/.wave`, inside],
    ['a workspace spelled through a link', (r) => `${r}/repo-link`, (r) => `${r}/repo/.wave`, inside],
    ['a workspace inside the home', (r) => `${r}/repo`, (r) => r, contains],
  ])('%s', async (_name, workspace, home, refused) => {
    const check = assertHomeOutsideWorkspace(workspace(root), home(root))
    if (!refused) {
      await expect(check).resolves.toBeUndefined()
      return
    }

    const error = await check.catch((error_: unknown) => error_)
    expect(error).toBeInstanceOf(WaveError)
    expect(error).toMatchObject({exitCode: 2})
    expect((error as WaveError).message).toMatch(refused)
    expect((error as WaveError).message).not.toContain('\n')
  })

  it('reads WAVE_HOME when no home is given', async () => {
    const saved = process.env.WAVE_HOME
    process.env.WAVE_HOME = path.join(repo, '.wave')
    try {
      await expect(assertHomeOutsideWorkspace(repo)).rejects.toMatchObject({exitCode: 2})
    } finally {
      if (saved === undefined) delete process.env.WAVE_HOME
      else process.env.WAVE_HOME = saved
    }
  })

  it('refuses a home it cannot resolve (a link loop)', async () => {
    symlinkSync(path.join(root, 'loop-b'), path.join(root, 'loop-a'))
    symlinkSync(path.join(root, 'loop-a'), path.join(root, 'loop-b'))
    await expect(assertHomeOutsideWorkspace(repo, path.join(root, 'loop-a', 'home'))).rejects.toMatchObject({
      exitCode: 2,
      message: /^Cannot use WAVE_HOME: .*symbolic link/,
    })
  })
})
