/**
 * Which credential reaches the Anthropic API, in the SDK's own order: `ANTHROPIC_API_KEY`, else
 * `ANTHROPIC_AUTH_TOKEN`, else workload identity federation (`ANTHROPIC_FEDERATION_RULE_ID`,
 * `ANTHROPIC_ORGANIZATION_ID` and an identity token from `ANTHROPIC_IDENTITY_TOKEN_FILE` or
 * `ANTHROPIC_IDENTITY_TOKEN`), which the SDK's credential chain exchanges at `/v1/oauth/token` for a
 * short-lived bearer: no stored key, a CI job's OIDC token in its place. wave writes no exchange of its
 * own; it only says which credential is in use (`wave doctor`), refuses to start with none (exit 2),
 * and turns a refused exchange into one line (exit 2).
 */
import {readFileSync} from 'node:fs'

import {ExitCode, WaveError} from '../base/errors.js'

type CredentialKind = 'api-key' | 'auth-token' | 'federation'

export interface CredentialInUse {
  kind: CredentialKind
  /** How `wave doctor` names it: the variables, never a value. */
  shown: string
}

const set = (name: string) => Boolean(process.env[name]?.trim())

/** The federation variables, when the rule, the organization and an identity token source are all set. */
function federation(): CredentialInUse | undefined {
  if (!set('ANTHROPIC_FEDERATION_RULE_ID') || !set('ANTHROPIC_ORGANIZATION_ID')) return undefined
  const file = process.env.ANTHROPIC_IDENTITY_TOKEN_FILE?.trim()
  if (!file && !set('ANTHROPIC_IDENTITY_TOKEN')) return undefined
  const from = file ? `the identity token file ${file}` : 'ANTHROPIC_IDENTITY_TOKEN'
  return {
    kind: 'federation',
    shown: `workload identity federation: rule ${process.env.ANTHROPIC_FEDERATION_RULE_ID!.trim()}, organization ${process.env.ANTHROPIC_ORGANIZATION_ID!.trim()}, ${from} (exchanged at /v1/oauth/token; no key stored)`,
  }
}

/** The credential the SDK will use, or undefined when there is none. */
export function credentialInUse(): CredentialInUse | undefined {
  if (set('ANTHROPIC_API_KEY')) return {kind: 'api-key', shown: 'ANTHROPIC_API_KEY is set (value not shown)'}
  if (set('ANTHROPIC_AUTH_TOKEN')) return {kind: 'auth-token', shown: 'ANTHROPIC_AUTH_TOKEN is set (value not shown)'}
  return federation()
}

const NO_CREDENTIAL_HINT =
  'Export ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for an Anthropic-compatible endpoint), or for workload identity federation ANTHROPIC_FEDERATION_RULE_ID, ANTHROPIC_ORGANIZATION_ID and ANTHROPIC_IDENTITY_TOKEN_FILE (or ANTHROPIC_IDENTITY_TOKEN).'

/** Fails before any request without a credential, or with an identity token file that cannot be read or is empty. */
export function assertAnthropicCredential(): CredentialInUse {
  const credential = credentialInUse()
  if (!credential) {
    throw new WaveError(
      'ANTHROPIC_API_KEY is not set: wave needs it (or ANTHROPIC_AUTH_TOKEN, or workload identity federation) to reach the model.',
      ExitCode.usage,
      NO_CREDENTIAL_HINT,
    )
  }

  if (credential.kind === 'federation' && !set('ANTHROPIC_IDENTITY_TOKEN')) {
    const file = process.env.ANTHROPIC_IDENTITY_TOKEN_FILE!.trim()
    let token: string
    try {
      token = readFileSync(file, 'utf8').trim()
    } catch (error) {
      throw new WaveError(
        `The identity token file ${file} (ANTHROPIC_IDENTITY_TOKEN_FILE) cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`,
        ExitCode.usage,
      )
    }

    if (!token) throw new WaveError(`The identity token file ${file} (ANTHROPIC_IDENTITY_TOKEN_FILE) is empty.`, ExitCode.usage)
  }

  return credential
}

/**
 * The SDK's failed token exchange (its WorkloadIdentityError, or a read of the identity token) as one
 * line, exit 2: a bad, expired or mismatched identity token is the user's to fix, and no retry cures it.
 */
export function federationFailure(error: unknown): WaveError | undefined {
  const e = error as {name?: string; message?: string; statusCode?: number | null}
  const message = String(e?.message ?? '')
  const federated = e?.name === 'WorkloadIdentityError' || /identity token/i.test(message)
  if (!federated || credentialInUse()?.kind !== 'federation') return undefined
  const status = typeof e.statusCode === 'number' ? ` (HTTP ${e.statusCode})` : ''
  // The SDK's message names the status, the request id and the endpoint's redacted answer: its first sentence is the line.
  const said = message.split(/(?<=\.)\s/)[0].slice(0, 300)
  return new WaveError(
    `The identity token was not exchanged for an access token${status}: ${said}`,
    ExitCode.usage,
    "Check ANTHROPIC_FEDERATION_RULE_ID and ANTHROPIC_ORGANIZATION_ID against the federation rule, and that the identity token is current (a CI job's OIDC token expires within minutes).",
  )
}

/** The identity token's value, to be scrubbed wherever a secret is: the variable's, or the file's content. */
export function identityTokenValue(): string | undefined {
  const inline = process.env.ANTHROPIC_IDENTITY_TOKEN?.trim()
  if (inline) return inline
  const file = process.env.ANTHROPIC_IDENTITY_TOKEN_FILE?.trim()
  if (!file) return undefined
  try {
    return readFileSync(file, 'utf8').trim() || undefined
  } catch {
    return undefined
  }
}
