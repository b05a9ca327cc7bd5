/**
 * The credentials wave holds, and the one scrubber every sink uses: stdout text and JSON, stream events,
 * job summaries, transcripts, state files, records and error lines. Dispatch also refuses a tool call
 * whose input holds one of them.
 */
/** The cloud credentials a log line must never show, beside ANTHROPIC_API_KEY and ANTHROPIC_AUTH_TOKEN. */
const CLOUD_SECRET_VARIABLES = ['AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_BEARER_TOKEN_BEDROCK'] as const

/** Variables whose values never reach a log, a transcript, a result or a tool. */
const SECRET_VARIABLES = [
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_AUTH_TOKEN',
  ...CLOUD_SECRET_VARIABLES,
  'GITHUB_TOKEN',
  'GH_TOKEN',
  'GITLAB_TOKEN',
  'CI_JOB_TOKEN',
] as const

/** The secrets set in this process (values of eight characters or more: shorter ones would scrub words). */
export function secretValues(): string[] {
  return SECRET_VARIABLES.map((name) => process.env[name]).filter((value): value is string => typeof value === 'string' && value.trim().length >= 8)
}

export function scrubSecrets(text: string): string {
  let clean = text
  for (const secret of secretValues()) clean = clean.split(secret).join('[redacted]')
  return clean
}
