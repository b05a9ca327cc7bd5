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
  // Workload identity federation: the CI job's OIDC token, exchanged for a bearer.
  'ANTHROPIC_IDENTITY_TOKEN',
  ...CLOUD_SECRET_VARIABLES,
  'GITHUB_TOKEN',
  'GH_TOKEN',
  'GITLAB_TOKEN',
  'CI_JOB_TOKEN',
] as const

/**
 * Secrets wave learns as it runs, in no variable: an identity token read from its file, the bearer the
 * SDK's token exchange returned (model/table.ts). Scrubbed and refused as the variables' are.
 */
const learned = new Set<string>()

/** Adds a secret wave came to hold (eight characters or more; shorter would scrub words). */
export function registerSecret(value: string | undefined): void {
  if (value && value.trim().length >= 8) learned.add(value.trim())
}

/** The secrets set in this process (values of eight characters or more: shorter ones would scrub words). */
export function secretValues(): string[] {
  const set = SECRET_VARIABLES.map((name) => process.env[name]).filter((value): value is string => typeof value === 'string' && value.trim().length >= 8)
  return learned.size === 0 ? set : [...set, ...learned]
}

export function scrubSecrets(text: string): string {
  let clean = text
  for (const secret of secretValues()) clean = clean.split(secret).join('[redacted]')
  return clean
}
