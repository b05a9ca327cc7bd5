#!/usr/bin/env bash
# Installs the project's dependencies in the current directory before wave runs, so a plan's checks
# (npm test, pytest) find them: the sandbox they run in has no network. WAVE_INSTALL_COMMAND:
#   auto (or empty)  by the lockfile: pnpm-lock.yaml pnpm install --frozen-lockfile, yarn.lock yarn install
#                    --frozen-lockfile, package-lock.json npm ci, requirements.txt pip install -r; without
#                    one, by the manifest: package.json npm install (no lockfile written), pyproject.toml or
#                    setup.py pip install -e .; else nothing;
#   none             nothing;
#   anything else    that command, run by bash.
# It says what it installed, and why, on its first line (and in the job's summary). WAVE_INSTALL_RESULT,
# when set, names the file it records that in for wave (review/dependency-install.ts): the command, why,
# its exit status and, when it failed, its output's last 30 lines, as JSON. The Action keeps it in wave's
# home, outside the checkout and hidden from every sandbox. With the record, a failed install does not
# fail this step: wave says it in the pull request's comment, the install's tail and the fix with it,
# asks no model and fails the job (exit 1). Without one, a failed install fails the step, before wave runs.
# Files the install wrote into the checkout (node_modules/ where .gitignore has no entry, *.egg-info/)
# are excluded in .git/info/exclude: they are not the project's, and a checkout with untracked files is
# no plan's commit.
set -euo pipefail

command=${WAVE_INSTALL_COMMAND:-auto}
why=''
# The record wave reads: command why status [log]; node is the Action's (setup-node ran before).
record() {
  [ -n "${WAVE_INSTALL_RESULT:-}" ] || return 0
  mkdir -p "$(dirname "$WAVE_INSTALL_RESULT")"
  node -e '
    const fs = require("fs")
    const [file, command, why, status, log] = process.argv.slice(1)
    const lines = status !== "0" && log ? fs.readFileSync(log, "utf8").replace(/\n+$/, "").split("\n").slice(-30) : undefined
    const tail = lines?.map((line) => (line.length > 500 ? `${line.slice(0, 500)}...` : line)).join("\n")
    fs.writeFileSync(file, JSON.stringify({version: 1, command, why, setting: "install-command", exitCode: Number(status), tail}) + "\n")
  ' "$WAVE_INSTALL_RESULT" "$@"
}
case $command in
  none) echo "Installing no dependencies (install-command: none)." ; record '' 'install-command: none' 0 ; exit 0 ;;
  auto)
    if [ -f pnpm-lock.yaml ]; then
      command='corepack enable && pnpm install --frozen-lockfile'; why='by pnpm-lock.yaml'
    elif [ -f yarn.lock ]; then
      command='corepack enable && yarn install --frozen-lockfile'; why='by yarn.lock'
    elif [ -f package-lock.json ] || [ -f npm-shrinkwrap.json ]; then
      command='npm ci --no-audit --no-fund'; why='by package-lock.json'
    elif [ -f requirements.txt ]; then
      command='python3 -m pip install -r requirements.txt'; why='by requirements.txt'
    elif [ -f package.json ]; then
      command='npm install --no-package-lock --no-audit --no-fund'; why='by package.json: no lockfile, so the newest versions its ranges allow'
    elif [ -f pyproject.toml ] || [ -f setup.py ]; then
      command='python3 -m pip install -e .'; why="by $( [ -f pyproject.toml ] && echo pyproject.toml || echo setup.py ): no requirements.txt"
    else
      echo "No lockfile or manifest (package.json, requirements.txt, pyproject.toml, setup.py): no dependencies installed (set install-command to install some)."
      record '' 'no lockfile or manifest' 0
      exit 0
    fi
    ;;
  *) why='install-command' ;;
esac

said="Installing the project's dependencies ($why): $command"
echo "$said"
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then printf '%s\n' "$said" >> "$GITHUB_STEP_SUMMARY"; fi
untracked() { git ls-files --others --exclude-standard --directory 2> /dev/null | sort || true; }
before=$(untracked)
# Its output to the step's log as it comes, and to a file for the record's tail.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
bash -c "$command" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
record "$command" "$why" "$status" "$log"
if [ "$status" != 0 ]; then
  if [ -n "${WAVE_INSTALL_RESULT:-}" ]; then
    echo "::error::The project's dependencies were not installed: \`$command\` ($why) exited $status. Fix the install or set install-command; wave says so in the comment and asks no model."
    exit 0
  fi
  echo "::error::The project's dependencies were not installed: \`$command\` ($why) exited $status. Fix the install or set install-command; wave did not run."
  exit "$status"
fi
if [ -d .git/info ]; then
  comm -13 <(printf '%s\n' "$before") <(untracked) | sed -e '/^$/d' -e 's|^|/|' >> .git/info/exclude
fi
echo "Installed the project's dependencies ($why)."
