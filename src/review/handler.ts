/**
 * One forge event, once its reader has made it an intent: the decisions every forge shares. An event
 * that asks nothing ends here (exit 0); otherwise the person asking must have the access the forge's
 * minimum names, or gets a reply saying they may not and nothing else happens; `/wave help` and a
 * comment that does not parse are answered; then the review step runs (steps.ts). A push (replan-on-push)
 * by someone without that access is passed over without a reply.
 */
import {usageError} from '../base/errors.js'
import {COMMAND_HELP} from './commands.js'
import {answered} from './refusal.js'
import {planned, replanPushed} from './replan.js'
import type {Intent} from './intent.js'
import {approve, reject, reply, requestChanges, resume, type ReviewOutcome, type ReviewRun} from './steps.js'

interface ReviewEvent {
  /** The event's name, for the outcome. */
  event: string
  intent: Intent
  /** What a step needs, made once the event asks something of wave (the forge's client and options, the checkout). */
  prepare(): Promise<Pick<ReviewRun, 'client'> & Partial<Pick<ReviewRun, 'options'>> & {complete(): Promise<ReviewRun>}>
}

/** An event that asks nothing of wave: exit 0, saying why. */
export const ignored = (event: string, reason: string): ReviewOutcome => ({event, message: `Nothing applies: ${reason}.`, outcome: 'ignored'})

export async function handleReview({event, intent, prepare}: ReviewEvent): Promise<ReviewOutcome> {
  if (intent.kind === 'ignore') return ignored(event, intent.reason)

  const prepared = await prepare()
  const {client, options} = prepared
  const {trigger} = intent
  const access = await client.access({id: trigger.actorId, login: trigger.actor})
  // A push is no request to wave: one by someone who may not act here is passed over, not answered in the thread.
  if (!access.allowed && intent.kind === 'pushed')
    return ignored(event, `@${trigger.actor} pushed, and planning again takes ${access.needs}, where they have ${access.has}`)
  if (!access.allowed) {
    const why = `that takes ${access.needs}`
    await reply({client, options}, trigger, `you may not ask wave to act here: ${why}, and you have ${access.has}.`)
    return {event, message: `@${trigger.actor} may not ask wave to act here: ${why}, and they have ${access.has}.`, outcome: 'refused'}
  }

  if (intent.kind === 'help' || intent.kind === 'invalid') {
    const problem = intent.kind === 'invalid' ? `${intent.message}\n\n` : ''
    await reply({client, options}, trigger, `${problem}wave understands these ${client.words.comment}s:\n\n\`\`\`\n${COMMAND_HELP}\n\`\`\``)
    if (intent.kind === 'invalid') throw answered(usageError(intent.message))
    return {event, message: 'Answered with the /wave commands.', outcome: 'answered'}
  }

  const run = await prepared.complete()
  switch (intent.kind) {
    case 'plan': {
      return planned(run, intent)
    }

    case 'approve': {
      return approve(run, intent)
    }

    case 'request-changes': {
      return requestChanges(run, intent)
    }

    case 'reject': {
      return reject(run, intent)
    }

    case 'resume': {
      return resume(run, intent)
    }

    case 'pushed': {
      return replanPushed(run, intent)
    }
  }
}
