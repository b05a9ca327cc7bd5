#!/usr/bin/env bash
# The OS sandbox wave runs Bash commands in (bubblewrap), made ready on a Linux CI machine: bwrap is
# installed when missing, and on Ubuntu 24.04 (GitHub's ubuntu-latest), where AppArmor lets only programs
# with a profile saying so create user namespaces, bwrap gets such a profile (only bwrap: the kernel's
# switch for every program stays on). Ends with a sandbox that starts, or fails saying why: a run whose
# approval grants commands would refuse to start anyway (exit 2), so the job stops here, before any model call.
# One script for every caller: the Action (action.yml), its setup step for workflows (setup/action.yml,
# which examples/github-actions/wave.yml uses) and the project's own CI (.ci/run).
set -euo pipefail

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi; }
starts() { bwrap --unshare-all --die-with-parent --ro-bind / / true 2>/dev/null; }

if ! command -v bwrap >/dev/null; then
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap
fi

if ! starts && [ "$(cat /proc/sys/kernel/apparmor_restrict_unprivileged_userns 2>/dev/null)" = 1 ]; then
  printf '%s\n' 'abi <abi/4.0>,' 'include <tunables/global>' \
    "profile bwrap $(command -v bwrap) flags=(unconfined) {" '  userns,' '  include if exists <local/bwrap>' '}' |
    as_root tee /etc/apparmor.d/bwrap >/dev/null
  as_root apparmor_parser -r /etc/apparmor.d/bwrap
fi

if ! starts; then
  echo "::error::The sandbox (bubblewrap) cannot start on this machine: run \`wave doctor\` here to see why, or approve with --sandbox off to run commands unsandboxed."
  exit 1
fi
echo "sandbox: $(bwrap --version) starts here"
