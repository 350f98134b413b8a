#!/usr/bin/env bash
# Make sure dist/js_hello.wasm exists and is up to date, for test suites.
#
#   bash sdk-guest-examples/js-hello/ensure-built.sh      (from any directory)
#
# - installs node_modules when missing: `npm ci` (or `npm install` when there
#   is no package-lock.json, or when `npm ci` rejects the lock file); this is
#   the only step that needs the network;
# - runs `node build.mjs` when dist/js_hello.wasm is missing or older than
#   anything in src/, build.mjs, package-lock.json or the repository's wit/;
# - prints the component's absolute path as the last line of stdout (progress
#   goes to stderr), so callers can use the output directly.
#
# Exit codes: 0 ok; 2 node or npm missing / too old; 1 install or build failed.
# Concurrent callers are serialised with flock(1) when it is available.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
out="$here/dist/js_hello.wasm"

say() { printf 'ensure-built(js-hello): %s\n' "$*" >&2; }

for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    say "error: '$tool' not found on PATH. Install Node.js 18 or newer (with npm) to build the JS example skill."
    exit 2
  fi
done
node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" -lt 18 ]; then
  say "error: Node.js $(node --version) is too old; 18 or newer is needed."
  exit 2
fi

mkdir -p "$here/dist"
if command -v flock >/dev/null 2>&1; then
  exec 9>"$here/dist/.ensure-built.lock"
  flock 9
fi

if [ ! -d node_modules ] || [ ! -f node_modules/.package-lock.json ]; then
  if [ -f package-lock.json ]; then
    say "node_modules missing: npm ci"
    ci_log="$(mktemp)"
    trap 'rm -f "$ci_log"' EXIT
    if npm ci --no-audit --no-fund >"$ci_log" 2>&1; then
      cat "$ci_log" >&2
    else
      # A registry that lacks some other platform's optional binaries (e.g.
      # @rolldown/binding-darwin-arm64@1.3.2) yields a lock file without them,
      # and `npm ci` then refuses it as "out of sync". `npm install` still
      # installs exactly the locked versions (and leaves the lock unchanged).
      say "npm ci failed ($(grep -m1 -E 'npm (error|ERR!) (code|Missing)' "$ci_log" || echo 'see below')); retrying with npm install (same locked versions)"
      npm install --no-audit --no-fund >&2 || { say "error: npm install failed"; exit 1; }
    fi
  else
    say "node_modules missing and no package-lock.json: npm install"
    npm install --no-audit --no-fund >&2 || { say "error: npm install failed"; exit 1; }
  fi
fi

stale=""
if [ ! -f "$out" ]; then
  stale="missing"
else
  newer="$(find src build.mjs package-lock.json ../../wit -newer "$out" -type f -print -quit 2>/dev/null || true)"
  [ -n "$newer" ] && stale="older than $newer"
fi
if [ -n "$stale" ]; then
  say "dist/js_hello.wasm $stale: node build.mjs"
  node build.mjs >&2 || { say "error: node build.mjs failed"; exit 1; }
fi

printf '%s\n' "$out"
