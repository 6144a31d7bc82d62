#!/usr/bin/env bash
# Short fixed-time fuzz run of every atheris target in fuzz/ over its committed corpus.
#
#   scripts/fuzz_short.sh [seconds per target, default 25]
#
# Each target first replays its whole committed corpus (fuzz/corpus/<target>/, which holds the
# regression inputs of every finding fixed so far), then mutates for the given time. New inputs go
# to a temporary directory, so the committed corpus is never modified. Prints executions and
# coverage per target; exits non-zero on any finding (uncaught exception, crash, timeout, OOM),
# leaving the reproducer in $FUZZ_ARTIFACTS (default: a temp dir, printed).
set -uo pipefail
cd "$(dirname "$0")/.."
secs="${1:-${FUZZ_SECONDS:-25}}"
py="${PYTHON:-python}"
artifacts="${FUZZ_ARTIFACTS:-$(mktemp -d -t cw-fuzz-artifacts.XXXXXX)}"
mkdir -p "$artifacts"
if ! "$py" -c "import atheris" 2>/dev/null; then
  echo "fuzz_short: atheris is not installed (pip install atheris)" >&2
  exit 2
fi
status=0
printf '%-18s %10s %8s %8s %8s %s\n' target executions cov ft corpus result
for target in fuzz_importers fuzz_formats fuzz_from_edges fuzz_algorithms fuzz_store_open fuzz_cli fuzz_snapshot fuzz_mcp_http; do
  work="$(mktemp -d -t "cw-$target.XXXXXX")"
  log="$work/log.txt"
  "$py" "fuzz/$target.py" "$work" "fuzz/corpus/$target" \
      -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$artifacts/$target-" >"$log" 2>&1
  rc=$?
  done_line="$(grep -a -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1)"
  execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  cov="$(echo "$done_line" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')"
  ft="$(echo "$done_line" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')"
  corp="$(echo "$done_line" | sed -n 's/.*corp: \([0-9]*\).*/\1/p')"
  if [ "$rc" -eq 0 ] && [ -n "$done_line" ]; then
    result=ok
  else
    result="FINDING (exit $rc)"
    status=1
  fi
  printf '%-18s %10s %8s %8s %8s %s\n' "$target" "${execs:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$result"
  if [ "$result" != ok ]; then
    echo "---- $target log (tail) ----"
    grep -a -v -E '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse)' "$log" | tail -40
    echo "---- reproducer(s) in $artifacts ----"
    ls -1 "$artifacts" | grep "^$target-" || true
  fi
  rm -rf "$work"
done
exit "$status"
