#!/usr/bin/env bash
# Runs the runtime benchmarks (release) and prints the medians.
#
#   tests/bench.sh                 # benches/runtime.rs, agent_loop.rs, languages.rs, wiki.rs
#   tests/bench.sh warm_call       # a criterion filter
#   KNOBS=1 tests/bench.sh         # also benches/wasmtime_knobs.rs (what-ifs)
#   HYPERFINE=1 tests/bench.sh process   # cross-check `agent skill list` with hyperfine
#
# The process benchmark needs target/release/agent, built here first.
# Results: target/criterion/ (HTML reports need criterion's `html_reports`
# feature, which the workspace leaves off); medians are printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release -p agent
cargo bench -p agent-tests --bench runtime -- "$@"
cargo bench -p agent-tests --bench agent_loop -- "$@"
# The hello tool in Rust, JavaScript, Go and Python, built by `agent skill build`
# (needs the toolchains ./test.sh installs: target/pyenv/bin and ~/.cargo/bin on PATH).
PATH="$PWD/target/pyenv/bin:${CARGO_HOME:-$HOME/.cargo}/bin:$PATH" \
    cargo bench -p agent-tests --bench languages -- "$@"
# The wiki on a generated 50k-line project: the host pipeline, and the release binary end to end
# against an instant loopback model (docs/wiki.md, "Speed").
AGENT_BIN="$PWD/target/release/agent" cargo bench -p agent-tests --bench wiki -- "$@"
if [[ "${KNOBS:-}" == 1 ]]; then
    cargo bench -p agent-tests --bench wasmtime_knobs -- "$@"
fi

if [[ "${HYPERFINE:-}" == 1 ]] && command -v hyperfine >/dev/null; then
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    mkdir -p "$tmp/home" "$tmp/project"
    (
        cd "$tmp/project"
        export AGENT_HOME="$tmp/home" CI=true NO_COLOR=1
        "$OLDPWD/target/release/agent" skill list >/dev/null # fills the cache
        hyperfine -N --warmup 5 --runs 50 --export-json "$tmp/hf.json" \
            "$OLDPWD/target/release/agent skill list" \
            "$OLDPWD/target/release/agent --version"
        python3 - "$tmp/hf.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    name = r["command"].split("/")[-1]
    print(f"hyperfine median {r['median'] * 1e3:8.2f} ms  {name}")
PY
    )
fi

# Medians of every benchmark run so far (criterion's estimates.json).
python3 - <<'EOF'
import json, pathlib
rows = []
for est in pathlib.Path("target/criterion").glob("**/new/estimates.json"):
    bench = json.loads((est.parent / "benchmark.json").read_text())
    median = json.loads(est.read_text())["median"]["point_estimate"]  # ns
    rows.append((bench["full_id"], median))
def fmt(ns):
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns/scale:8.2f} {unit}"
    return f"{ns:8.1f} ns"
for full_id, ns in sorted(rows):
    print(f"{fmt(ns)}  {full_id}")
EOF
