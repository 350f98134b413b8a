#!/usr/bin/env bash
# Whole-process cost of SKILL.md skills in `agent skill list`: the median of N runs
# with no instruction skills and with 200 of them in the user's skills directory.
#
#   tests/bench-skillmd.sh [BINARY] [RUNS]     # default target/release/agent, 30 runs
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-target/release/agent}")
runs=${2:-30}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/empty/home" "$tmp/empty/project" "$tmp/full/home/config/skills" "$tmp/full/project"
for i in $(seq -w 0 199); do
    d="$tmp/full/home/config/skills/skill-$i"
    mkdir -p "$d"
    {
        printf -- '---\nname: skill-%s\ndescription: Skill number %s. Use when asked about topic %s.\n' "$i" "$i" "$i"
        printf 'allowed_tools: [read_file, grep]\nmetadata:\n  requires:\n    bins: [sh]\n    env: [HOME]\n---\n'
        printf '# Skill %s\n\nDo the thing with $ARGUMENTS.\n' "$i"
        for _ in $(seq 40); do echo "Some instructions line."; done
    } > "$d/SKILL.md"
done
python3 - "$bin" "$runs" "$tmp" <<'PY'
import os, statistics, subprocess, sys, time
binary, runs, tmp = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def median(case):
    env = dict(os.environ, AGENT_HOME=f"{tmp}/{case}/home", CI="true", NO_COLOR="1")
    cwd = f"{tmp}/{case}/project"
    subprocess.run([binary, "skill", "list"], env=env, cwd=cwd, check=True, capture_output=True)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        out = subprocess.run([binary, "skill", "list"], env=env, cwd=cwd, check=True, capture_output=True)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times), out.stdout.decode().count("instructions (unsigned)")
base, n0 = median("empty")
full, n1 = median("full")
print(f"skill list, no SKILL.md skills:   median {base:.1f} ms ({n0} listed)")
print(f"skill list, 200 SKILL.md skills:  median {full:.1f} ms ({n1} listed)")
print(f"added by 200 SKILL.md skills:     {full - base:.1f} ms")
PY
