/**
 * A task's transcript: until the model enters plan mode there is no plan to keep one beside, so the
 * messages are held. Hooks are always given a transcript (as Claude Code gives one): until there is a
 * plan, the held messages go to a file of the task's own outside the workspace, made when a hook first
 * asks and removed when the task ends; once there is a plan, everything goes beside it.
 */
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import type {MessageParam} from '@anthropic-ai/sdk/resources/messages'

import {appendTranscript, appendTranscriptFile, type TranscriptContent, transcriptPathOf} from '../plans/transcript.js'

export class TaskTranscript {
  private readonly held: MessageParam[] = []
  private planPath: string | undefined
  private early: string | undefined

  /** The plan the task made: the held messages go beside it, and so does everything after. */
  async planMade(planPath: string): Promise<void> {
    this.planPath = planPath
    for (const message of this.held) await appendTranscript(planPath, {message, session: 'task'})
  }

  /** The transcript's path a hook is given: the plan's, else the task's own file, made now. */
  path(): string {
    if (this.planPath) return transcriptPathOf(this.planPath)
    if (!this.early) {
      this.early = path.join(mkdtempSync(path.join(tmpdir(), 'wave-task-')), 'transcript.jsonl')
      writeFileSync(this.early, '', {mode: 0o600})
      for (const message of this.held) appendTranscriptFile(this.early, {message, session: 'task'})
    }

    return this.early
  }

  async message(message: MessageParam): Promise<void> {
    this.held.push(message)
    if (this.planPath) await appendTranscript(this.planPath, {message, session: 'task'})
    else if (this.early) appendTranscriptFile(this.early, {message, session: 'task'})
  }

  /** An entry that only a plan's transcript keeps (a compaction, an agent's record). */
  async planEntry(fields: TranscriptContent): Promise<void> {
    if (this.planPath) await appendTranscript(this.planPath, {...fields, session: 'task'})
  }

  /** The task's own file, if a hook asked for one, goes when the task ends. */
  close(): void {
    if (this.early) rmSync(path.dirname(this.early), {force: true, recursive: true})
  }
}
