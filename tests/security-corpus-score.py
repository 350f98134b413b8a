#!/usr/bin/env python3
"""Scores a findings report against the labelled corpus
(tests/fixtures/security/corpus/manifest.json) and prints TPR, FPR and
Youden's J (TPR - FPR) per category, per language, and the macro average
per language: the same rules as tests/cli/security_corpus.rs.

A finding belongs to a case when it is in the case's file and its CWE is one
of the case's category's CWEs (manifest "categories"). A vulnerable case is
found when such a finding exists; a safe case is a false positive when one
exists. Findings in files outside the manifest are ignored.

    security-corpus-score.py MANIFEST agent REPORT.json     # agent --output json
    security-corpus-score.py MANIFEST semgrep REPORT.json   # semgrep --json
"""
import collections
import json
import re
import sys


def findings_agent(report):
    for f in report["findings"]:
        yield f["location"]["file"], f.get("cwe") or ""


def findings_semgrep(report, root):
    for r in report["results"]:
        path = r["path"]
        if root and path.startswith(root):
            path = path[len(root):].lstrip("/")
        cwes = r.get("extra", {}).get("metadata", {}).get("cwe", [])
        if isinstance(cwes, str):
            cwes = [cwes]
        for c in cwes:
            m = re.match(r"(CWE-\d+)", c)
            if m:
                yield path, m.group(1)


def score(manifest, found):
    """found: set of (file, cwe). Returns rows {(lang, cat): [tp, fn, fp, tn]}."""
    cats = manifest["categories"]
    rows = collections.defaultdict(lambda: [0, 0, 0, 0])
    for case in manifest["cases"]:
        hit = any((case["file"], c) in found for c in cats[case["category"]])
        key = (case["language"], case["category"])
        if case["expected"] == "vulnerable":
            rows[key][0 if hit else 1] += 1
        else:
            rows[key][2 if hit else 3] += 1
    return rows


def rates(tp, fn, fp, tn):
    tpr = tp / (tp + fn) if tp + fn else 0.0
    fpr = fp / (fp + tn) if fp + tn else 0.0
    return tpr, fpr, tpr - fpr


def table(manifest, rows, title):
    print(title)
    print(f"{'language':<11} {'category':<18} {'vuln':>4} {'safe':>4} {'TP':>3} {'FP':>3} {'TPR':>6} {'FPR':>6} {'J':>6}")
    langs = sorted({l for l, _ in rows})
    for lang in langs:
        js = []
        for cat in manifest["categories"]:
            if (lang, cat) not in rows:
                continue
            tp, fn, fp, tn = rows[(lang, cat)]
            tpr, fpr, j = rates(tp, fn, fp, tn)
            js.append((tpr, fpr, j))
            print(f"{lang:<11} {cat:<18} {tp + fn:>4} {fp + tn:>4} {tp:>3} {fp:>3} {tpr:>6.3f} {fpr:>6.3f} {j:>6.3f}")
        n = len(js)
        print(f"{lang:<11} {'(macro average)':<18} {'':>4} {'':>4} {'':>3} {'':>3} "
              f"{sum(x[0] for x in js) / n:>6.3f} {sum(x[1] for x in js) / n:>6.3f} {sum(x[2] for x in js) / n:>6.3f}")
    print()
    print(f"{'all languages':<30} {'vuln':>4} {'safe':>4} {'TP':>3} {'FP':>3} {'TPR':>6} {'FPR':>6} {'J':>6}")
    for cat in manifest["categories"]:
        tp, fn, fp, tn = (sum(rows[(l, cat)][i] for l in langs if (l, cat) in rows) for i in range(4))
        tpr, fpr, j = rates(tp, fn, fp, tn)
        print(f"{cat:<30} {tp + fn:>4} {fp + tn:>4} {tp:>3} {fp:>3} {tpr:>6.3f} {fpr:>6.3f} {j:>6.3f}")


def main():
    manifest_path, kind, report_path = sys.argv[1:4]
    root = sys.argv[4] if len(sys.argv) > 4 else ""
    manifest = json.load(open(manifest_path))
    report = json.load(open(report_path))
    if kind == "agent":
        found = set(findings_agent(report))
    elif kind == "semgrep":
        found = set(findings_semgrep(report, root))
    else:
        sys.exit(f"unknown report kind {kind!r}: expected 'agent' or 'semgrep'")
    table(manifest, score(manifest, found), f"{kind}: {report_path}")


if __name__ == "__main__":
    main()
