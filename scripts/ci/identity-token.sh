#!/usr/bin/env bash
# Keyless (workload identity federation): fetches the job's GitHub OIDC token, which the workflow grants
# with `permissions: id-token: write`, for the audience the federation rule expects, into a file only
# this user reads under $RUNNER_TEMP (outside the workspace; the sandbox's $HOME and /tmp are its own),
# and names it to the next steps as ANTHROPIC_IDENTITY_TOKEN_FILE, which the SDK's credential chain
# reads and exchanges at /v1/oauth/token. The token is masked in the log.
set -euo pipefail

if [ -z "${ACTIONS_ID_TOKEN_REQUEST_URL:-}" ] || [ -z "${ACTIONS_ID_TOKEN_REQUEST_TOKEN:-}" ]; then
  echo "::error::federation-rule-id is set, but this job cannot fetch an OIDC token: give the workflow 'permissions: id-token: write'."
  exit 1
fi

audience=$(node -e 'process.stdout.write(encodeURIComponent(process.argv[1]))' "${WAVE_IDENTITY_AUDIENCE:-https://api.anthropic.com}")
dir="$RUNNER_TEMP/wave-identity"
mkdir -p "$dir"
chmod 700 "$dir"
file="$dir/token"
answer=$(curl -sSf --retry 3 -H "Authorization: bearer $ACTIONS_ID_TOKEN_REQUEST_TOKEN" "$ACTIONS_ID_TOKEN_REQUEST_URL&audience=$audience")
token=$(printf '%s' "$answer" | node -e 'let s="";process.stdin.on("data",(d)=>s+=d).on("end",()=>{const v=JSON.parse(s).value;if(typeof v!=="string"||!v)process.exit(1);process.stdout.write(v)})') || {
  echo "::error::The OIDC token request answered without a token."
  exit 1
}
echo "::add-mask::$token"
(umask 077 && printf '%s\n' "$token" > "$file")
echo "ANTHROPIC_IDENTITY_TOKEN_FILE=$file" >> "$GITHUB_ENV"
echo "Fetched the job's OIDC token for workload identity federation (audience ${WAVE_IDENTITY_AUDIENCE:-https://api.anthropic.com})."
