#!/usr/bin/env bash
# The units of a plan `wave github` just approved, run in the Action's own job one after another when the
# workflow has no unit jobs (the Action's `units` input, `in-job`, its default): each unit's run from the
# planned commit (`wave run <plan> --unit NAME`), its row in the plan's comment (`wave github
# --unit-result`), the work tree put back to the planned commit before the next, then the merge of their
# results (`wave plans merge`) and its report and delivery (`wave github --units-merged`): the comment's
# rows filled and wave/apply ended, never left pending. docs/ci/units.md.
#
#   bash run-units.sh RESULT.json MERGED.json
# RESULT.json is wave github's result; for any outcome but a plan with units approved this does nothing.
# MERGED.json gets the merge's `wave github --units-merged --json` result; its exit code is this script's.
# WAVE_BIN is wave; WAVE_HOME, RUNNER_TEMP and the event's variables are the Action step's.
set -uo pipefail

result=$1
merged=$2
units=$(node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))
  if (r.ok && r.outcome === "approved" && Array.isArray(r.units) && r.units.length > 0 && r.planPath)
    process.stdout.write([r.planPath, ...r.units].join("\n"))
' "$result") || exit 1
[ -n "$units" ] || exit 0
plan=$(printf '%s\n' "$units" | head -n 1)
folder="$RUNNER_TEMP/wave/units"
rm -rf "$folder" && mkdir -p "$folder"
planned=$(git rev-parse HEAD)

# Unit names are letters, digits, ., _ and - (wave checks them when it binds the units).
for unit in $(printf '%s\n' "$units" | tail -n +2); do
  echo "::group::unit $unit"
  status=0
  "$WAVE_BIN" run "$plan" --unit "$unit" >&2 || status=$?
  [ "$status" = 0 ] || echo "::warning::unit $unit ended with exit $status: its row says why."
  unit_result="${plan%.md}.unit-$unit.json"
  "$WAVE_BIN" github --unit-result "$unit_result" --quiet > /dev/null || echo "::warning::unit $unit's row was not written: the merge writes every row."
  cp "$unit_result" "${plan%.md}.unit-$unit.patch" "$folder/" 2> /dev/null || true
  # The next unit starts from the planned commit, as its own job would (the ignored files, such as the
  # installed dependencies, stay: in-job units share them; unit jobs do not).
  git reset -q --hard "$planned" && git clean -q -fd
  echo "::endgroup::"
done

# The merge's output beside the results' folder, not in it: every file there is read as a unit's result.
"$WAVE_BIN" plans merge "$plan" "$folder" --json > "$folder.merge.json" || true
"$WAVE_BIN" github --units-merged "$folder.merge.json" --json > "$merged"
