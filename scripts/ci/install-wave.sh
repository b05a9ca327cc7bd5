#!/usr/bin/env bash
# Installs wave for a CI job (the Action's and setup/action.yml's install step), pinned, and verified:
#
#   (default)       this checkout of wave (the ref the Action is used at), built once and kept in
#                   $WAVE_INSTALL_CACHE/<key>, where the key is this checkout's content (its files, the
#                   lockfile) and Node's major version: a job whose cache holds the key is ready in seconds,
#                   without npm, the registry or a build. The build's dependencies come from the lockfile
#                   (npm ci, each checked against its integrity); a checkout that has node_modules uses them.
#   WAVE_VERSION    a released version instead: the release's tarball, wave-cli-<version>.tgz from
#                   $WAVE_RELEASE_URL/v<version>/, refused unless its sha256 is WAVE_SHA256.
#   WAVE_PACKAGE    a tarball you made (`npm run pack`), checked against WAVE_SHA256 when that is given.
#
# Nothing installs an unpinned wave-cli from the npm registry.
#
#   install-wave.sh          install; outputs bin, version and from (built, restored, release, package)
#   install-wave.sh --key    only say where the install is kept: outputs key and path (for actions/cache)
#
# Outputs go to $GITHUB_OUTPUT (name=value lines), bin/ to $GITHUB_PATH; both optional outside Actions.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cache=${WAVE_INSTALL_CACHE:-$HOME/.cache/wave-install}
release_url=${WAVE_RELEASE_URL:-https://github.com/wave-cli/wave/releases/download}
output() { echo "$1=$2" >> "${GITHUB_OUTPUT:-/dev/null}"; }
fail() {
  echo "::error::$1"
  exit "${2:-1}"
}

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

# The key of this checkout: every file but what a build or an install adds, with Node's major version
# (the build is Node's), so another commit, another lockfile or another Node is another install.
source_key() {
  local node digest
  node=$(node -p 'process.versions.node.split(".")[0]')
  # What .gitignore names (the build's outputs: dist/, oclif.manifest.json) is left out: a checkout hashes the same before and after its build.
  digest=$(cd "$here" && find . \( -path ./node_modules -o -path ./dist -o -path ./.git -o -path ./.tmp -o -path ./.vitest-cache -o -name oclif.manifest.json -o -name '*.tgz' \) -prune -o -type f -print0 |
    LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-32)
  echo "wave-source-$(uname -s)-node$node-$digest"
}

if [ -n "${WAVE_VERSION:-}" ]; then
  [ -n "${WAVE_SHA256:-}" ] || fail "version ${WAVE_VERSION} needs its tarball's sha256 (the sha256 input; the release's wave-cli-${WAVE_VERSION}.tgz.sha256)." 2
  key="wave-release-${WAVE_VERSION}-${WAVE_SHA256:0:16}"
elif [ -n "${WAVE_PACKAGE:-}" ]; then
  key=""
else
  key=$(source_key)
fi

if [ "${1:-}" = --key ]; then
  output key "${key:-wave-package-$(date +%s)}"
  output path "$cache/${key:-none}"
  echo "${key:-no key: a package is installed afresh}"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A tarball, checked against the sha256 it is pinned to: one that does not match is refused, and nothing is installed.
verify() {
  local tarball=$1 expected=$2 actual
  actual=$(sha256_of "$tarball")
  [ "$actual" = "$expected" ] || fail "$(basename "$tarball") has sha256 $actual, not the pinned $expected: refusing to install it."
}

# A package and its runtime dependencies into $prefix, from npm's registry by integrity (a release, a package).
npm_install() {
  npm install --global --prefix "$1" --ignore-scripts --no-audit --no-fund --loglevel=error "$2" >&2
}

# This checkout, built and packed as it is published, with the runtime dependencies npm ci installed from
# the lockfile: no registry needed once node_modules is there.
build_into() {
  local prefix=$1 tarball package path
  if [ ! -d "$here/node_modules" ]; then
    echo "Installing wave's build dependencies from its lockfile (npm ci)..." >&2
    (cd "$here" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
  fi
  echo "Building wave from $here..." >&2
  (cd "$here" && npm run --silent build >&2)
  tarball=$(cd "$here" && node scripts/pack.js --destination "$work")
  package="$prefix/lib/node_modules/wave-cli"
  mkdir -p "$package" "$prefix/bin"
  tar xzf "$tarball" -C "$package" --strip-components=1
  # The runtime dependencies, as the lockfile names them and npm ci laid them out (each checked against
  # the lockfile's integrity then); an optional one missing on this platform is left out.
  while IFS= read -r path; do
    if [ ! -d "$here/$path" ]; then continue; fi
    mkdir -p "$package/$path"
    cp -RL "$here/$path/." "$package/$path/"
  done < <(node -e 'for (const [p, v] of Object.entries(require(process.argv[1]).packages)) if (p && !v.dev && !v.devOptional && !v.link) console.log(p)' "$here/package-lock.json")
  ln -s ../lib/node_modules/wave-cli/bin/run.js "$prefix/bin/wave"
}

from=""
if [ -n "$key" ] && [ -f "$cache/$key/.installed" ]; then
  prefix="$cache/$key"
  from=restored
elif [ -n "${WAVE_VERSION:-}" ]; then
  prefix="$cache/$key"
  tarball="$work/wave-cli-${WAVE_VERSION}.tgz"
  curl -fsSL --retry 3 -o "$tarball" "$release_url/v${WAVE_VERSION}/wave-cli-${WAVE_VERSION}.tgz" ||
    fail "Could not download wave-cli ${WAVE_VERSION} from $release_url/v${WAVE_VERSION}/: use a released version, or leave version empty to build the ref the Action is used at."
  verify "$tarball" "$WAVE_SHA256"
  rm -rf "$prefix"
  npm_install "$prefix" "$tarball"
  from=release
elif [ -n "${WAVE_PACKAGE:-}" ]; then
  prefix="${RUNNER_TEMP:-$work}/wave-cli"
  if [ -n "${WAVE_SHA256:-}" ]; then verify "$WAVE_PACKAGE" "$WAVE_SHA256"; fi
  npm_install "$prefix" "$WAVE_PACKAGE"
  from=package
else
  prefix="$cache/$key"
  rm -rf "$prefix"
  build_into "$prefix"
  from=built
fi

bin="$prefix/bin/wave"
installed=$("$bin" --version) || fail "The installed wave at $bin does not run."
# Kept only once it runs: a half-made install is never restored.
if [ -n "$key" ]; then touch "$prefix/.installed"; fi
echo "$installed ($from)"
echo "$prefix/bin" >> "${GITHUB_PATH:-/dev/null}"
output bin "$bin"
output version "$(node -p 'require(process.argv[1]).version' "$prefix/lib/node_modules/wave-cli/package.json")"
output from "$from"
