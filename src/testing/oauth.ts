/**
 * Workload identity federation as the API answers it: `POST /v1/oauth/token` takes a jwt-bearer grant
 * (the SDK's oidcFederationProvider: JSON with `grant_type`, `assertion`, `federation_rule_id`,
 * `organization_id`, and the `oauth-2025-04-20` and `oidc-federation-2026-04-01` betas) and answers
 * `{access_token, token_type: "Bearer", expires_in}`; a token that does not match the rule, or whose
 * JWT `exp` has passed, is 401 `authentication_error`. A server given a federation then takes only the
 * bearer it issued on `/v1/messages` (with the OAuth beta), never an API key: what a test checks the
 * client sent.
 */
import {randomBytes} from 'node:crypto'
import type {IncomingMessage, ServerResponse} from 'node:http'

import type {RecordedRequest} from './recorded.js'
import {sendJson} from './responses.js'

/** What the federation rule trusts, as the Console configures it. */
export interface Federation {
  /** The identity token the rule accepts (a CI job's OIDC token). */
  identityToken: string
  federationRuleId: string
  organizationId: string
  /** Seconds an issued bearer lives (default 3600). */
  expiresIn?: number
}

const GRANT_TYPE_JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer'
const OAUTH_BETA = 'oauth-2025-04-20'
const FEDERATION_BETA = 'oidc-federation-2026-04-01'

/** An answer of the token endpoint: its status and JSON body. */
interface TokenAnswer {
  status: number
  body: Record<string, unknown>
}

const betas = (req: IncomingMessage) =>
  String(req.headers['anthropic-beta'] ?? '')
    .split(',')
    .map((beta) => beta.trim())

/** A JWT's `exp` (seconds), if the assertion is a JWT that has one. */
function expiryOf(assertion: string): number | undefined {
  const payload = assertion.split('.')[1]
  if (!payload) return undefined
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as {exp?: unknown}
    return typeof claims.exp === 'number' ? claims.exp : undefined
  } catch {
    return undefined
  }
}

const error = (status: number, type: string, message: string): TokenAnswer => ({body: {error: {message, type}, type: 'error'}, status})

/** The token endpoint: the issued bearer goes into `issued`. */
function answerTokenRequest(req: IncomingMessage, body: unknown, federation: Federation | undefined, issued: Set<string>): TokenAnswer {
  if (!federation) return error(404, 'not_found_error', 'messages-server: no federation rule is configured')
  if (!betas(req).includes(FEDERATION_BETA)) return error(400, 'invalid_request_error', `the token exchange needs the ${FEDERATION_BETA} beta`)
  const grant = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>
  if (grant.grant_type !== GRANT_TYPE_JWT_BEARER) return error(400, 'invalid_request_error', `grant_type: expected ${GRANT_TYPE_JWT_BEARER}`)
  for (const field of ['assertion', 'federation_rule_id', 'organization_id']) {
    if (typeof grant[field] !== 'string' || !grant[field]) return error(400, 'invalid_request_error', `${field}: Field required`)
  }

  if (grant.federation_rule_id !== federation.federationRuleId || grant.organization_id !== federation.organizationId) {
    return error(401, 'authentication_error', 'no federation rule of this organization matches')
  }

  const exp = expiryOf(String(grant.assertion))
  if (exp !== undefined && exp * 1000 <= Date.now()) return error(401, 'authentication_error', 'the identity token has expired')
  if (grant.assertion !== federation.identityToken) return error(401, 'authentication_error', 'the identity token does not match the federation rule')
  const token = `sk-ant-oat01-${randomBytes(24).toString('base64url')}`
  issued.add(token)
  return {body: {access_token: token, expires_in: federation.expiresIn ?? 3600, token_type: 'Bearer'}, status: 200}
}

/** Why a message request is refused under a federation (no issued bearer, or an API key), or undefined. */
function bearerProblem(req: IncomingMessage, issued: ReadonlySet<string>): string | undefined {
  if (req.headers['x-api-key']) return 'this organization authenticates through workload identity federation: an API key is not accepted'
  const bearer = /^Bearer\s+(.+)$/i.exec(String(req.headers.authorization ?? ''))?.[1]
  if (!bearer || !issued.has(bearer)) return 'invalid bearer token'
  if (!betas(req).includes(OAUTH_BETA)) return `OAuth authentication needs the ${OAUTH_BETA} beta`
  return undefined
}

/** What answering needs of the server: the record's outcome, its error answer, its request ids. */
interface Answering {
  done(outcome: string, status?: number): void
  fail(res: ServerResponse, status: number, type: string, message: string): void
  nextId(prefix: string): string
}

/** The server's federation: the token endpoint, and the bearer every message must carry once a rule is configured. */
export class TokenDesk {
  /** The bearers issued. */
  readonly issued = new Set<string>()

  constructor(private readonly federation?: Federation) {}

  /** Answers the request when it is the desk's (the token endpoint, or a message without the issued bearer): true when answered. */
  intercept(req: IncomingMessage, res: ServerResponse, record: RecordedRequest, path: string, {done, fail, nextId}: Answering): boolean {
    if (record.method === 'POST' && path === '/v1/oauth/token') {
      const answer = answerTokenRequest(req, record.body, this.federation, this.issued)
      done(answer.status === 200 ? 'token' : 'token-refused', answer.status)
      sendJson(res, answer.status, JSON.stringify(answer.body), nextId('req_01'))
      return true
    }

    const unauthorized = this.federation && path === '/v1/messages' ? bearerProblem(req, this.issued) : undefined
    if (!unauthorized) return false
    done('unauthorized', 401)
    fail(res, 401, 'authentication_error', unauthorized)
    return true
  }
}
