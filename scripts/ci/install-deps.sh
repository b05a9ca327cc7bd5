#!/usr/bin/env bash
# Installs the project's dependencies in the current directory before wave runs, so a plan's checks
# (npm test, pytest) find them: the sandbox they run in has no network. WAVE_INSTALL_COMMAND:
#   auto (or empty)  by the lockfile: pnpm-lock.yaml pnpm install --frozen-lockfile, yarn.lock yarn install
#                    --frozen-lockfile, package-lock.json npm ci, requirements.txt pip install -r; else nothing;
#   none             nothing;
#   anything else    that command, run by bash.
set -euo pipefail

command=${WAVE_INSTALL_COMMAND:-auto}
case $command in
  none) echo "Installing no dependencies (install-command: none)." ;;
  auto)
    if [ -f pnpm-lock.yaml ]; then
      corepack enable && pnpm install --frozen-lockfile
    elif [ -f yarn.lock ]; then
      corepack enable && yarn install --frozen-lockfile
    elif [ -f package-lock.json ] || [ -f npm-shrinkwrap.json ]; then
      npm ci --no-audit --no-fund
    elif [ -f requirements.txt ]; then
      python3 -m pip install -r requirements.txt
    else
      echo "No lockfile or requirements.txt: no dependencies to install (set install-command to install some)."
    fi
    ;;
  *) bash -c "$command" ;;
esac
