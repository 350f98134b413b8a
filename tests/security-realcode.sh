#!/usr/bin/env bash
# False positives of `agent security-audit` on real code already on the
# machine (docs/security.md, "Measured accuracy"): copies three trees into a
# scratch directory, audits each with the given binary, and prints the SAST
# findings (pattern rules and taint engine) per 100,000 lines of source, by rule. The manual review of a
# sample of the findings is not reproduced here (docs/security.md lists it);
# the per-finding JSON reports are left in the scratch directory for it.
#
#   tests/security-realcode.sh [AGENT_BINARY] [SCRATCH_DIR]
#
# Trees (each skipped with a message when absent on this machine):
#   python-stdlib  /usr/lib/python3.*/ minus test directories, site- and dist-packages
#   npm            target/npm-mcp/node_modules (set up by ./test.sh; NPM_MODULES=DIR
#                  for another) and /usr/lib/node_modules/npm
#   cargo          every 10th crate (sorted by name) of ~/.cargo/registry/src/*/
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/debug/agent}
scratch=${2:-target/security-realcode}
[ -x "$bin" ] || { echo "no agent binary at $bin: build it with 'cargo build -p agent' or pass its path" >&2; exit 2; }
bin=$(realpath "$bin")
rm -rf "$scratch"
mkdir -p "$scratch"
scratch=$(realpath "$scratch")

copy_py() {
    local src
    src=$(ls -d /usr/lib/python3.[0-9]* 2>/dev/null | sort -V | tail -1)
    [ -n "$src" ] || { echo "python-stdlib: no /usr/lib/python3.* on this machine" >&2; return 1; }
    mkdir -p "$scratch/tree/python-stdlib"
    (cd "$src" && find . -name '*.py' \
        -not -path './test/*' -not -path '*/tests/*' -not -path '*/idle_test/*' \
        -not -path './site-packages/*' -not -path './dist-packages/*' -print0 |
        tar --null -T - -cf - | tar -xf - -C "$scratch/tree/python-stdlib")
}
copy_npm() {
    local any=0 dest
    for d in "${NPM_MODULES:-target/npm-mcp/node_modules}" /usr/lib/node_modules/npm; do
        [ -d "$d" ] || continue
        any=1
        dest="$scratch/tree/npm/$(basename "$(dirname "$d")")-$(basename "$d")"
        mkdir -p "$dest"
        (cd "$d" && find . \( -name '*.js' -o -name '*.mjs' -o -name '*.cjs' -o -name '*.ts' \) \
            -not -name '*.d.ts' -not -name '*.min.js' -print0 |
            tar --null -T - -cf - | tar -xf - -C "$dest")
    done
    [ "$any" = 1 ] || { echo "npm: neither target/npm-mcp/node_modules nor /usr/lib/node_modules/npm exists (run ./test.sh once)" >&2; return 1; }
}
copy_cargo() {
    local reg
    reg=$(ls -d "$HOME"/.cargo/registry/src/*/ 2>/dev/null | head -1)
    [ -n "$reg" ] || { echo "cargo: no ~/.cargo/registry/src" >&2; return 1; }
    mkdir -p "$scratch/tree/cargo"
    ls "$reg" | sort | awk 'NR % 10 == 1' | while read -r crate; do
        mkdir -p "$scratch/tree/cargo/$crate"
        (cd "$reg/$crate" && find . -name '*.rs' -not -path './tests/*' -not -path './benches/*' -print0 |
            tar --null -T - -cf - | tar -xf - -C "$scratch/tree/cargo/$crate")
    done
}

printf '%-14s %9s %9s %9s\n' tree lines findings per100k
for tree in python-stdlib npm cargo; do
    case $tree in
        python-stdlib) copy_py || continue ;;
        npm) copy_npm || continue ;;
        cargo) copy_cargo || continue ;;
    esac
    lines=$(find "$scratch/tree/$tree" -type f -print0 | xargs -0 cat | wc -l)
    "$bin" security-audit "$scratch/tree/$tree" --output json --fail-on none \
        --out "$scratch/$tree.json" >/dev/null 2>"$scratch/$tree.stderr" || {
        echo "$tree: the audit failed, see $scratch/$tree.stderr" >&2
        exit 1
    }
    python3 - "$scratch/$tree.json" "$tree" "$lines" <<'PY'
import collections, json, sys
report = json.load(open(sys.argv[1]))
tree, lines = sys.argv[2], int(sys.argv[3])
# The SAST findings: the pattern rules' and the taint engine's (secrets are measured apart).
sast = [f for f in report["findings"] if f["scanner"].endswith("/sast") or f["scanner"] == "taint"]
print(f"{tree:<14} {lines:>9} {len(sast):>9} {len(sast) * 100000 / max(lines, 1):>9.1f}")
for rule, n in collections.Counter(f["rule_id"] for f in sast).most_common():
    print(f"  {rule:<20} {n:>6}")
PY
done
echo "reports: $scratch/<tree>.json"
