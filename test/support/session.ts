/**
 * The per-test setup of the e2e suites: a fresh sandbox (temp HOME and git repository) and a scripted
 * Messages API server for every test, torn down after it, and `wave` bound to both.
 */
import {afterEach, beforeEach} from 'vitest'

import {makeSandbox, runWave, type RunWaveResult, type Sandbox} from './cli.js'
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
