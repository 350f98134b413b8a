#!/usr/bin/env bash
# Memory and time of an audit with a million findings (issue 13, item 8).
#
# Generates a tree of FILES Python files of LINES lines, each line an AWS
# access key id (fake, made of a counter: `AKIA` and 16 digits) that the
# built-in secrets scanner reports, so FILES × LINES findings. Then runs
# `agent security-audit` on it, writing SARIF to a file, under
# /usr/bin/time -v, and prints the peak RSS, the wall time, the exit code
# and the summary the audit printed.
#
#   tests/bench-findings.sh [BINARY] [FILES] [LINES]
#   tests/bench-findings.sh target/release/agent 1000 1000   # 1,000,000 findings (default)
#
# The component cache is warmed first (an audit of an empty directory) so the
# measurement does not include compiling security-base.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-target/release/agent}
FILES=${2:-1000}
LINES=${3:-1000}
[ -x "$BIN" ] || { echo "no binary at $BIN (cargo build --release -p agent)"; exit 2; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (GNU time)"; exit 2; }

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/home" "$WORK/tree" "$WORK/empty"
python3 - "$WORK/tree" "$FILES" "$LINES" <<'PY'
import os, sys
root, files, lines = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
n = 0
for f in range(files):
    d = os.path.join(root, f"pkg{f // 100:03d}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"keys_{f:05d}.py"), "w") as out:
        for i in range(lines):
            out.write(f'k{i} = "AKIA{n:016d}"\n')
            n += 1
PY
echo "tree: $FILES files × $LINES lines = $((FILES * LINES)) planted findings, $(du -sh "$WORK/tree" | cut -f1)"

export AGENT_HOME="$WORK/home" CI=true NO_COLOR=1
"$BIN" security-audit "$WORK/empty" --output json > /dev/null 2>&1

set +e
/usr/bin/time -v -o "$WORK/time.txt" "$BIN" security-audit "$WORK/tree" \
    --output sarif --out "$WORK/report.sarif" --fail-on none 2> "$WORK/stderr.txt"
code=$?
set -e
rss_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$WORK/time.txt")
wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$WORK/time.txt")
user=$(awk -F': ' '/User time/ {print $2}' "$WORK/time.txt")
sys=$(awk -F': ' '/System time/ {print $2}' "$WORK/time.txt")
echo "exit $code · peak RSS $((rss_kb / 1024)) MiB · wall $wall · user ${user}s · sys ${sys}s · SARIF $(du -h "$WORK/report.sarif" | cut -f1)"
grep -E "total|not listed|passed|FAILED|INCOMPLETE" "$WORK/stderr.txt" || true
