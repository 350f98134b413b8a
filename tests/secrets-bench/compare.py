#!/usr/bin/env python3
"""Same-run comparison of `agent security-audit --scanners secrets` with
gitleaks on the labelled secrets tree (tests/fixtures/security/secrets).

    compare.py AGENT GITLEAKS [RUNS]

Materializes the tree into a temporary directory, runs both tools on it
RUNS times (default 5; the median wall time is reported), and prints per
format: the credentials each tool found (recall over `found/` files) and
the look-alikes each reported (`safe/` files), then totals, wall times and
the ratio ours/gitleaks. Exit status 1 when ours misses a credential
gitleaks finds.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
MATERIALIZE = HERE.parent / "fixtures/security/secrets/materialize.py"


def files_under(root):
    out = set()
    for dirpath, _, names in os.walk(root):
        for n in names:
            out.add(os.path.relpath(os.path.join(dirpath, n), root))
    return out


def timed(cmd, env=None):
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    return time.perf_counter() - t, p


def ours(agent, tree, home, runs):
    env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=home, XDG_DATA_HOME=home, XDG_CACHE_HOME=home)
    cmd = [agent, "security-audit", tree, "--scanners", "secrets", "--output", "json", "--fail-on", "none"]
    times, report = [], None
    for _ in range(runs):
        t, p = timed(cmd, env)
        if not p.stdout.strip().startswith("{"):
            sys.exit(f"agent failed ({p.returncode}):\n{p.stderr}")
        times.append(t)
        report = json.loads(p.stdout)
    found = {f["location"]["file"] for f in report["findings"]}
    return statistics.median(times), found


def gitleaks(binary, tree, runs):
    times, found = [], set()
    with tempfile.TemporaryDirectory() as out:
        path = os.path.join(out, "report.json")
        cmd = [binary, "dir", tree, "--report-format", "json", "--report-path", path,
               "--no-banner", "--exit-code", "0", "--log-level", "error"]
        for _ in range(runs):
            t, p = timed(cmd)
            if p.returncode != 0:
                sys.exit(f"gitleaks failed ({p.returncode}):\n{p.stderr}")
            times.append(t)
        for f in json.load(open(path)):
            found.add(os.path.relpath(os.path.join(tree, f["File"]) if not os.path.isabs(f["File"]) else f["File"], tree))
    return statistics.median(times), found


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    agent, leaks = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    with tempfile.TemporaryDirectory() as tmp:
        tree = os.path.join(tmp, "tree")
        home = os.path.join(tmp, "home")
        os.makedirs(home)
        subprocess.run([sys.executable, str(MATERIALIZE), tree], check=True)
        all_files = files_under(tree)
        # Warm the component cache once (first use compiles nothing for
        # built-ins, but keep the timing runs alike).
        ours(agent, tree, home, 1)
        t_ours, f_ours = ours(agent, tree, home, runs)
        t_gl, f_gl = gitleaks(leaks, tree, runs)
    formats = sorted({f.split("/")[0] for f in all_files})
    print(f"{'format':<22} {'cases':>5} {'ours':>5} {'gitleaks':>8} {'safe':>5} {'ours FP':>7} {'gl FP':>6}")
    tot = dict(cases=0, ours=0, gl=0, safe=0, ofp=0, gfp=0)
    gl_only = []
    for fmt in formats:
        found = {f for f in all_files if f.startswith(f"{fmt}/found/")}
        safe = {f for f in all_files if f.startswith(f"{fmt}/safe/")}
        row = dict(cases=len(found), ours=len(found & f_ours), gl=len(found & f_gl),
                   safe=len(safe), ofp=len(safe & f_ours), gfp=len(safe & f_gl))
        gl_only += sorted((found & f_gl) - f_ours)
        for k in tot:
            tot[k] += row[k]
        print(f"{fmt:<22} {row['cases']:>5} {row['ours']:>5} {row['gl']:>8} {row['safe']:>5} {row['ofp']:>7} {row['gfp']:>6}")
    print(f"{'TOTAL':<22} {tot['cases']:>5} {tot['ours']:>5} {tot['gl']:>8} {tot['safe']:>5} {tot['ofp']:>7} {tot['gfp']:>6}")
    print(f"recall: ours {tot['ours'] / tot['cases']:.1%}, gitleaks {tot['gl'] / tot['cases']:.1%}; "
          f"found by ours / by gitleaks = {tot['ours'] / max(tot['gl'], 1):.2f}")
    print(f"wall time (median of {runs}): ours {t_ours * 1000:.0f} ms, gitleaks {t_gl * 1000:.0f} ms, "
          f"ratio {t_ours / t_gl:.2f}")
    if gl_only:
        print("found by gitleaks only:", ", ".join(gl_only))
        sys.exit(1)


if __name__ == "__main__":
    main()
