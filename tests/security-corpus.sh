#!/usr/bin/env bash
# Scores `agent security-audit` on the labelled corpus
# (tests/fixtures/security/corpus, docs/security.md "Measured accuracy"):
# TPR, FPR and Youden's J per category and language, the same table as
# `cargo test --test cli -- security_corpus --nocapture`, for any binary.
#
#   tests/security-corpus.sh [AGENT_BINARY]          # default target/debug/agent
#   SEMGREP_RULES=DIR tests/security-corpus.sh        # also score semgrep
#
# Semgrep: installed from PyPI into target/pyenv when missing. It has no
# rules of its own and `--config p/...` downloads them from semgrep.dev, so
# the comparison runs only with a local rule directory (SEMGREP_RULES, e.g. a
# checkout of the semgrep-rules repository); without one it is skipped, and
# the script says so.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/debug/agent}
[ -x "$bin" ] || { echo "no agent binary at $bin: build it with 'cargo build -p agent' or pass its path" >&2; exit 2; }
corpus=tests/fixtures/security/corpus
manifest=$corpus/manifest.json
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cp -R "$corpus" "$scratch/corpus"

"$bin" security-audit "$scratch/corpus" --output json --fail-on none --out "$scratch/agent.json" \
    >/dev/null 2>"$scratch/agent.stderr" || { cat "$scratch/agent.stderr" >&2; exit 1; }
python3 tests/security-corpus-score.py "$manifest" agent "$scratch/agent.json"

echo
if [ -z "${SEMGREP_RULES:-}" ]; then
    echo "semgrep: skipped (no local rule directory: set SEMGREP_RULES=DIR; 'p/...' rule packs need semgrep.dev)"
    exit 0
fi
[ -d "$SEMGREP_RULES" ] || { echo "SEMGREP_RULES=$SEMGREP_RULES is not a directory" >&2; exit 2; }
[ -x target/pyenv/bin/python ] || python3 -m venv target/pyenv
[ -x target/pyenv/bin/semgrep ] || target/pyenv/bin/pip install --quiet semgrep
target/pyenv/bin/semgrep --version
(cd "$scratch/corpus" && "$OLDPWD/target/pyenv/bin/semgrep" scan --config "$SEMGREP_RULES" --json \
    --metrics off --disable-version-check --quiet . >"$scratch/semgrep.json")
python3 tests/security-corpus-score.py "$manifest" semgrep "$scratch/semgrep.json"
