/**
 * The per-test setup of the e2e suites: a fresh sandbox (temp HOME and git repository) and a scripted
 * Messages API server for every test, torn down after it, and `wave` bound to both; and the same for the
 * in-process tests of the drivers and the review core, with the environment a session reads set for it.
 */
import path from 'node:path'

import {afterEach, beforeEach} from 'vitest'

import {makeSandbox, runWave, type RunWaveResult, type Sandbox, TEST_API_KEY} from './cli.js'
import {type MessagesServer, startMessagesServer} from './messages-server.js'

export interface ScriptedSession {
  sandbox: Sandbox
  server: MessagesServer
}

/** Registers the hooks; `onReady` receives each test's sandbox and server. */
export function useScriptedSession(onReady: (session: ScriptedSession) => void): void {
  let session: ScriptedSession | undefined
  beforeEach(async () => {
    session = {sandbox: makeSandbox(), server: await startMessagesServer()}
    onReady(session)
  })

  afterEach(async () => {
    await session?.server.close()
    session?.sandbox.cleanup()
  })
}

/** Runs bin/run.js in the session's repository (or `cwd`), with its HOME and server. */
export function waveIn(session: () => ScriptedSession) {
  return (args: string[], env?: Record<string, string | undefined>, cwd?: string): Promise<RunWaveResult> => {
    const {sandbox, server} = session()
    return runWave(args, {cwd: cwd ?? sandbox.repo, env, home: sandbox.home, server})
  }
}

/** What a session in this process reads of the environment: set for each test, and put back after it. */
const SESSION_ENV = ['WAVE_HOME', 'ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'WAVE_MODEL', 'ENABLE_TOOL_SEARCH'] as const

/**
 * useScriptedSession for sessions run in this process (the drivers, the review core): wave's home in the
 * sandbox's HOME, the API key and the scripted server's URL set, tool search on, WAVE_MODEL unset (the
 * default model), and all five as they were after each test.
 */
export function useInProcessSession(onReady: (session: ScriptedSession) => void): void {
  const saved = Object.fromEntries(SESSION_ENV.map((name) => [name, process.env[name]]))
  useScriptedSession((session) => {
    process.env.WAVE_HOME = path.join(session.sandbox.home, '.wave')
    process.env.ANTHROPIC_API_KEY = TEST_API_KEY
    process.env.ANTHROPIC_BASE_URL = session.server.url
    // The scripted server stands in for Anthropic's own API: tool search on, as there (cli.ts's waveEnv).
    process.env.ENABLE_TOOL_SEARCH = 'true'
    delete process.env.WAVE_MODEL
    onReady(session)
  })
  afterEach(() => {
    for (const name of SESSION_ENV) {
      if (saved[name] === undefined) delete process.env[name]
      else process.env[name] = saved[name]
    }
  })
}
