/**
 * Checks that can pass, evidence kept, and a run resumed from the pull request, end to end through
 * `wave github` (the GitHub stand-in, a bare remote, the scripted Messages API): a check that installs a
 * package from a stand-in registry passes only when the approval allows that host; a failing line in
 * the middle of a check's 300 lines reaches the model's retry turn, the job summary and the comment; and
 * `/wave resume` goes on with a run stopped at its checks, from the state the recipe's cache keeps.
 */
import {createHash} from 'node:crypto'
import {existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import http from 'node:http'
import type {AddressInfo} from 'node:net'
import path from 'node:path'
import {execFileSync} from 'node:child_process'

import {describe, expect, it} from 'vitest'

import {type Sandbox, sha256} from '../support/cli.js'
import {type CommentJob, commentJob, FAREWELL, git, nameIn, PLAN, statusOf, useGitHubForge} from '../support/forge-fixture.js'
import type {GitHubServer, StoredComment} from '../support/github-server.js'
import {type MessagesServer, planPathIn, type RecordedRequest, reply, toolUse} from '../support/messages-server.js'

let sandbox: Sandbox
let server: MessagesServer
let github: GitHubServer
let remote: string
let runs = 0
useGitHubForge({permissions: {alice: 'write', mona: 'maintain', paula: 'read'}}, (made) => {
  ;({forge: github, remote, sandbox, server} = made)
})

/** One workflow run for a comment (forge-fixture's commentJob); `--json` as the Action runs it when `json`. */
const onGitHub = (body: string, by: string, restore?: string, json = false): Promise<CommentJob> =>
  commentJob({github, remote, sandbox, server}, {args: json ? ['--json'] : [], body, by, restore, run: ++runs})

function stickyOn(issue: number): StoredComment {
  const found = github.commentsOn(issue).filter((c) => c.body.startsWith('<!-- wave:plan:'))
  expect(found).toHaveLength(1)
  return found[0]
}

const repliesTo = (login: string) => github.commentsOn(7).filter((c) => c.user.type === 'Bot' && c.body.includes(`@${login} `) && !c.body.startsWith('<!--'))

/** A plan with a contract whose one check is `check`: planned on the pull request; its name and sha256. */
async function planWithCheck(check: string): Promise<{name: string; sha: string}> {
  const plan = `${PLAN}\n## Verification\n- \`${check}\`\n`
  server.push((request: RecordedRequest) => reply(toolUse('Write', {content: plan, file_path: planPathIn(request)})), reply('Planned.'))
  const job = await onGitHub('/wave plan Add a farewell function', 'alice')
  expect(job.result.code, job.result.stderr).toBe(0)
  return {name: nameIn(stickyOn(7).body), sha: sha256(plan)}
}

/** The text of a request's last user message: what the model was told last (a retry turn's failing checks). */
function lastUserText(request: RecordedRequest): string {
  const last = request.body.messages.at(-1)
  const content = last.content
  return typeof content === 'string'
    ? content
    : content.map((block: {text?: string; content?: unknown}) => block.text ?? JSON.stringify(block.content ?? '')).join('\n')
}

// ------------------------------------------------------------------------------------------------ network

/** A stand-in npm registry holding one package, greet-pkg@1.0.0: what the plan's check installs. */
async function startRegistry(): Promise<{url: string; host: string; asked: string[]; close(): void}> {
  const dir = path.join(sandbox.root, 'registry')
  mkdirSync(path.join(dir, 'package'), {recursive: true})
  writeFileSync(path.join(dir, 'package', 'package.json'), '{"name":"greet-pkg","version":"1.0.0","main":"index.js"}\n')
  writeFileSync(path.join(dir, 'package', 'index.js'), 'module.exports = () => "greetings from the registry"\n')
  execFileSync('tar', ['czf', 'greet-pkg-1.0.0.tgz', 'package'], {cwd: dir})
  const tarball = readFileSync(path.join(dir, 'greet-pkg-1.0.0.tgz'))
  const asked: string[] = []
  let base = ''
  const registry = http.createServer((request, response) => {
    asked.push(request.url ?? '')
    if (request.url === '/greet-pkg') {
      const dist = {
        integrity: `sha512-${createHash('sha512').update(tarball).digest('base64')}`,
        shasum: createHash('sha1').update(tarball).digest('hex'),
        tarball: `${base}/greet-pkg/-/greet-pkg-1.0.0.tgz`,
      }
      response.setHeader('content-type', 'application/json')
      response.end(
        JSON.stringify({'dist-tags': {latest: '1.0.0'}, name: 'greet-pkg', versions: {'1.0.0': {dist, main: 'index.js', name: 'greet-pkg', version: '1.0.0'}}}),
      )
    } else if (request.url === '/greet-pkg/-/greet-pkg-1.0.0.tgz') {
      response.end(tarball)
    } else {
      response.writeHead(404, {'content-type': 'application/json'}).end('{}')
    }
  })
  await new Promise<void>((resolve) => registry.listen(0, '127.0.0.1', resolve))
  const host = `localhost:${(registry.address() as AddressInfo).port}`
  base = `http://${host}`
  return {asked, close: () => registry.close(), host, url: base}
}

describe('a check that needs a package from a registry', () => {
  it('passes only when the approval allows the registry’s host; another host allowed gets it refused by the proxy', async () => {
    const registry = await startRegistry()
    try {
      const check = `npm install --no-audit --no-fund --no-update-notifier --fetch-retries=0 --registry ${registry.url}/ greet-pkg && node -e "console.log(require('greet-pkg')())"`
      const {name, sha} = await planWithCheck(check)

      // Another host allowed: the check's requests reach the proxy, which refuses them; nothing reaches the registry.
      server.push(reply(toolUse('Write', {content: FAREWELL, file_path: 'src/farewell.ts'})), reply('Done.'), reply('Done.'), reply('Done.'))
      const refused = await onGitHub(`/wave approve ${name} --sha256 ${sha} --sandbox-network-allow registry.npmjs.org`, 'mona')
      expect(refused.result.code, refused.result.stderr).toBe(7)
      expect(registry.asked).toEqual([])
      expect(refused.result.stderr).toContain(`403 Forbidden - GET ${registry.url}/greet-pkg`)
      expect(refused.result.stderr).toContain(`A sandboxed command asked for ${registry.host}: refused`)
      const record = JSON.parse(readFileSync(path.join(refused.home, 'plans', `${name}.approval.json`), 'utf8'))
      expect(record.sandbox).toEqual({enabled: true, network: false, networkAllow: ['registry.npmjs.org']})
      expect(stickyOn(7).body).toContain('| Network | `registry.npmjs.org` only |')

      // The registry's host allowed: the same check installs the package and passes; the run delivers.
      server.push(reply(toolUse('Write', {content: FAREWELL, file_path: 'src/farewell.ts'})), reply('Done.'))
      const allowed = await onGitHub(`/wave approve ${name} --sha256 ${sha} --sandbox-network-allow ${registry.host}`, 'mona')
      expect(allowed.result.code, allowed.result.stderr).toBe(0)
      expect(registry.asked).toContain('/greet-pkg/-/greet-pkg-1.0.0.tgz')
      const after = stickyOn(7).body
      expect(statusOf(after)).toBe('✅ done')
      expect(after).toContain(`| Network | \`${registry.host}\` only |`)
      expect(after).toContain('✅ passed')
      // What the check installed is not the run's change: only the model's file is delivered.
      expect(git(remote, ['show', '--name-only', '--format=', 'refs/heads/feature'])).toBe('src/farewell.ts')
    } finally {
      registry.close()
    }
  })
})

// ------------------------------------------------------------------------------------------------ evidence

/** A check that prints 300 lines, the failing one (line 150) in the middle, and fails; until src/fixed.txt exists. */
const NOISY_CHECK = `test -f src/fixed.txt || { seq 1 300 | sed 's/^150$/not ok 64 farewell says bye/; s/^[0-9]*$/ok & passing/'; exit 1; }`
const FAILING = '150 | not ok 64 farewell says bye'

describe('a check failing in the middle of its output, and /wave resume', () => {
  it('brings the failing line to the model, the job summary and the comment; /wave resume then finishes the run', async () => {
    const {name, sha} = await planWithCheck(NOISY_CHECK)
    const before = server.messageRequests.length
    server.push(reply(toolUse('Write', {content: FAREWELL, file_path: 'src/farewell.ts'})), reply('Done.'), reply('Done.'), reply('Done.'))
    const stopped = await onGitHub(`/wave approve ${name} --sha256 ${sha}`, 'mona')
    expect(stopped.result.code, stopped.result.stderr).toBe(7)

    // The model's retry turns got the failing line, numbered, though 150 lines follow it.
    const retries = server.messageRequests.slice(before + 2)
    expect(retries).toHaveLength(2)
    for (const request of retries) expect(lastUserText(request)).toContain(FAILING)
    // Printed on stderr, shown in the job summary and the comment, with the comment's way on.
    expect(stopped.result.stderr).toContain(FAILING)
    expect(stopped.summary).toContain(FAILING)
    expect(stopped.summary).toContain(`/wave resume ${name}`)
    expect(stopped.summary).not.toContain('--resume')
    const sticky = stickyOn(7).body
    expect(statusOf(sticky)).toBe('❌ failed')
    expect(sticky).toContain(FAILING)
    expect(sticky).toContain(`/wave resume ${name}`)
    // The whole output is kept beside the transcript, each round's its own: the first run and its two retries.
    const logOf = (round: number) => path.join(stopped.home, 'plans', `${name}.check-${round}-1.log`)
    const log = readFileSync(logOf(1), 'utf8')
    expect(log.split('\n')).toHaveLength(301)
    expect(log).toContain('ok 299 passing')
    for (const round of [2, 3]) expect(readFileSync(logOf(round), 'utf8')).toBe(log)
    expect(existsSync(logOf(4))).toBe(false)

    // A reader may not resume; nothing runs.
    const asked = server.messageRequests.length
    const reader = await onGitHub(`/wave resume ${name}`, 'paula', stopped.home)
    expect(reader.result.code).toBe(0)
    expect(repliesTo('paula')[0].body).toContain('you may not ask wave to act here')
    expect(server.messageRequests).toHaveLength(asked)

    // Without the kept state (a job whose cache restored nothing): said, with how to start over.
    const nothing = await onGitHub(`/wave resume ${name}`, 'mona')
    expect(nothing.result.code).toBe(2)
    expect(repliesTo('mona').at(-1)!.body).toContain(`Nothing of plan ${name}'s stopped run was kept for this job`)
    expect(repliesTo('mona').at(-1)!.body).toContain(`/wave approve ${name} --sha256 ${sha}`)
    expect(server.messageRequests).toHaveLength(asked)

    // With it: the run goes on from its conversation and its changes, under the same approval, and finishes.
    server.push(reply(toolUse('Write', {content: 'fixed\n', file_path: 'src/fixed.txt'})), reply('Fixed the cause.'))
    const resumed = await onGitHub(`/wave resume ${name}`, 'mona', stopped.home)
    expect(resumed.result.code, resumed.result.stderr).toBe(0)
    const [first] = server.messageRequests.slice(asked)
    expect(lastUserText(first)).toContain(FAILING)
    expect(lastUserText(first)).toContain('was resumed')
    expect(statusOf(stickyOn(7).body)).toBe('✅ done')
    // The round that passed has its own log; the failing rounds' logs are as they were (fail, then pass).
    const resumedLog = (round: number) => path.join(resumed.home, 'plans', `${name}.check-${round}-1.log`)
    expect(readFileSync(resumedLog(4), 'utf8')).toBe('')
    expect(readFileSync(resumedLog(1), 'utf8')).toBe(log)
    // Delivered: the first job's file (carried as a patch) and the resumed run's, in one commit on the branch.
    expect(git(remote, ['show', 'refs/heads/feature:src/farewell.ts']) + '\n').toBe(FAREWELL)
    expect(git(remote, ['show', 'refs/heads/feature:src/fixed.txt'])).toBe('fixed')
    // The commit links the approval, not the /wave resume, which it names beside it.
    const message = git(remote, ['log', '-1', '--format=%B', 'refs/heads/feature'])
    const urlOf = (start: string) => github.commentsOn(7).find((c) => c.body.startsWith(start))!.html_url
    expect(message).toContain(`Approval: ${urlOf('/wave approve')}`)
    expect(message).toContain(
      `Resumed: ${
        github
          .commentsOn(7)
          .filter((c) => c.body.startsWith('/wave resume'))
          .at(-1)!.html_url
      }`,
    )
    expect(message).not.toContain(`Approval: ${urlOf('/wave resume')}`)
    const record = JSON.parse(readFileSync(path.join(resumed.home, 'plans', `${name}.approval.json`), 'utf8'))
    expect(record).toMatchObject({approver: 'mona', decision: 'approved', plan: {sha256: sha}})
  })
})

// ------------------------------------------------------------------------------------------------ every round's logs

describe('a run whose checks fail, then pass on the retry', () => {
  it('keeps both rounds’ logs, and the report (JSON, job summary) and the comment name both with their outcomes', async () => {
    // Fails, printing why, until src/fixed.txt exists: the model writes it on the retry turn.
    const check = 'test -f src/fixed.txt && echo fixed-now || { echo "not ok 1 src/fixed.txt is missing"; exit 1; }'
    const {name, sha} = await planWithCheck(check)
    server.push(
      reply(toolUse('Write', {content: FAREWELL, file_path: 'src/farewell.ts'})),
      reply('Done.'),
      // The retry turn: told the failing check, the model fixes the cause.
      reply(toolUse('Write', {content: 'fixed\n', file_path: 'src/fixed.txt'})),
      reply('Fixed.'),
    )
    const job = await onGitHub(`/wave approve ${name} --sha256 ${sha}`, 'mona', undefined, true)
    expect(job.result.code, job.result.stderr).toBe(0)

    // On disk: each round its own log, the failing one kept beside the passing one.
    const logOf = (round: number) => path.join(job.home, 'plans', `${name}.check-${round}-1.log`)
    expect(readFileSync(logOf(1), 'utf8')).toBe('not ok 1 src/fixed.txt is missing\n')
    expect(readFileSync(logOf(2), 'utf8')).toBe('fixed-now\n')
    expect(existsSync(logOf(3))).toBe(false)

    // The JSON result's report: both rounds, each check's outcome and its log (by its name: the artifact holds the plans directory).
    const result = JSON.parse(job.result.stdout)
    expect(result.report.checkRounds).toEqual([
      {checks: [{command: check, exitCode: 1, outputFile: `${name}.check-1-1.log`}], round: 1},
      {checks: [{command: check, exitCode: 0, outputFile: `${name}.check-2-1.log`}], round: 2},
    ])
    // The job summary's report: the last round beside its checks, the earlier one collapsed, each with its outcome and log.
    expect(job.summary).toContain(`✅ passed | `)
    expect(job.summary).toContain(`| \`${name}.check-2-1.log\` |`)
    expect(job.summary).toContain('Earlier rounds of the checks: 1 (1 failed)')
    expect(job.summary).toMatch(new RegExp(`\\| 1 \\| .* \\| ❌ failed \\(exit 1\\) \\| \`${name}\\.check-1-1\\.log\` \\|`))

    // The comment: both logs named, with their outcomes, and where they are (the workflow run's artifacts).
    const sticky = stickyOn(7).body
    expect(statusOf(sticky)).toBe('✅ done')
    expect(sticky).toContain(`| \`${name}.check-2-1.log\` |`)
    expect(sticky).toMatch(new RegExp(`\\| 1 \\| .* \\| ❌ failed \\(exit 1\\) \\| \`${name}\\.check-1-1\\.log\` \\|`))
    expect(sticky).toContain(`in the artifacts of the [workflow run](https://github.test/octo/demo/actions/runs/${9000 + runs}) that ran it`)
    // No runner path leaks into the comment: the logs go by their names.
    expect(sticky).not.toContain(job.home)
  })
})
