#!/usr/bin/env bash
# Installs wave for a CI job from its npm package, into a prefix of its own ($RUNNER_TEMP/wave-cli),
# whose bin/ is added to the job's PATH. Which package:
#   WAVE_PACKAGE      a tarball (or any npm spec) to install instead, e.g. one `npm run pack` made (tests);
#   WAVE_BUILD=true   build this checkout of wave and install its tarball (a commit not released yet);
#   WAVE_VERSION      else, wave-cli at this version; empty: the version of this checkout's package.json,
#                     so an Action used at a tag installs the release of that tag.
# With npm's cache restored (the Action caches ~/.npm), the install needs no download.
# Outputs (GITHUB_OUTPUT): version, the installed wave's version, and bin, its executable.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
prefix="${RUNNER_TEMP:?RUNNER_TEMP is not set}/wave-cli"

if [ "${WAVE_BUILD:-false}" = true ]; then
  (cd "$here" && npm ci --ignore-scripts --no-audit --no-fund && npm run build >&2)
  spec=$(node "$here/scripts/pack.js" --destination "$RUNNER_TEMP")
elif [ -n "${WAVE_PACKAGE:-}" ]; then
  spec=$WAVE_PACKAGE
else
  version=${WAVE_VERSION:-$(node -p 'require(process.argv[1]).version' "$here/package.json")}
  spec="wave-cli@$version"
fi

status=0
npm install --global --prefix "$prefix" --prefer-offline --no-audit --no-fund --loglevel=error "$spec" || status=$?
if [ "$status" != 0 ]; then
  if [ -z "${WAVE_PACKAGE:-}" ] && [ "${WAVE_BUILD:-false}" != true ]; then
    echo "::error::Could not install $spec from the npm registry: use a released version (a vX.Y.Z tag of the Action, or its version input), or set build-from-source: true to build this ref."
  else
    echo "::error::Could not install wave from $spec (npm exit $status)."
  fi
  exit "$status"
fi

bin="$prefix/bin/wave"
installed=$("$bin" --version)
echo "$installed"
echo "$prefix/bin" >> "${GITHUB_PATH:-/dev/null}"
{
  echo "bin=$bin"
  echo "version=$(node -p 'require(process.argv[1]).version' "$prefix/lib/node_modules/wave-cli/package.json")"
} >> "${GITHUB_OUTPUT:-/dev/null}"
