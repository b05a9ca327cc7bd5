#!/usr/bin/env bash
# Installs the project's dependencies in the current directory before wave runs, so a plan's checks
# (npm test, pytest) find them: the sandbox they run in has no network. WAVE_INSTALL_COMMAND:
#   auto (or empty)  by the lockfile: pnpm-lock.yaml pnpm install --frozen-lockfile, yarn.lock yarn install
#                    --frozen-lockfile, package-lock.json npm ci, requirements.txt pip install -r; without
#                    one, by the manifest: package.json npm install (no lockfile written), pyproject.toml or
#                    setup.py pip install -e .; else nothing;
#   none             nothing;
#   anything else    that command, run by bash.
# It says what it installed, and why, on its first line (and in the job's summary). A failed install
# fails the step, before wave runs: no model is asked to work in a project whose checks cannot run.
# Files the install wrote into the checkout (node_modules/ where .gitignore has no entry, *.egg-info/)
# are excluded in .git/info/exclude: they are not the project's, and a checkout with untracked files is
# no plan's commit.
set -euo pipefail

command=${WAVE_INSTALL_COMMAND:-auto}
why=''
case $command in
  none) echo "Installing no dependencies (install-command: none)." ; exit 0 ;;
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
status=0
bash -c "$command" || status=$?
if [ "$status" != 0 ]; then
  echo "::error::The project's dependencies were not installed: \`$command\` ($why) exited $status. Fix the install or set install-command; wave did not run."
  exit "$status"
fi
if [ -d .git/info ]; then
  comm -13 <(printf '%s\n' "$before") <(untracked) | sed -e '/^$/d' -e 's|^|/|' >> .git/info/exclude
fi
echo "Installed the project's dependencies ($why)."
