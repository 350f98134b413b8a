#!/usr/bin/env bash
# Make sure dist/js_hello.wasm exists and is up to date, for test suites.
#
#   bash sdk-guest-examples/js-hello/ensure-built.sh      (from any directory)
#
# - installs node_modules when missing with `npm ci`, exactly the versions of
#   the committed package-lock.json (never `npm install`, which would rewrite
#   a tracked file); a lock file `npm ci` rejects is an error that says how to
#   regenerate it. This is the only step that needs the network;
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
  if [ ! -f package-lock.json ]; then
    say "error: $here/package-lock.json is missing; restore it (git checkout -- package-lock.json): the example installs exactly the locked versions"
    exit 1
  fi
  say "node_modules missing: npm ci"
  ci_log="$(mktemp)"
  trap 'rm -f "$ci_log"' EXIT
  if ! npm ci --no-audit --no-fund >"$ci_log" 2>&1; then
    cat "$ci_log" >&2
    if grep -q 'EUSAGE' "$ci_log"; then
      say "error: npm ci refused $here/package-lock.json: it is out of step with package.json. Regenerate it with \`npm install --package-lock-only\` in $here and commit it."
    else
      say "error: npm ci failed in $here (output above)"
    fi
    exit 1
  fi
  cat "$ci_log" >&2
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
