"""The Drain peer users would pick, drain3 (PyPI), on the same generated
corpus as the agent-logs miner (`cargo run --release -p agent-logs
--example mine -- gen FILE MIB --truth TRUTH`): its grouping accuracy (the
loghub definition, as tests/corpus/mod.rs computes it) and its speed on one
core. Two configurations: drain3's defaults, and the masking users add from
drain3's own example (IPs, numbers, hex, UUIDs). Run by docs/logs.md's
"Measurements" steps with the interpreter test.sh installs into target/pyenv.

usage: python drain3_compare.py FILE TRUTH
"""

import sys
import time
from collections import Counter, defaultdict

from drain3 import TemplateMiner
from drain3.masking import MaskingInstruction
from drain3.template_miner_config import TemplateMinerConfig


def accuracy(predicted, truth):
    pred_truths = defaultdict(Counter)
    true_sizes = Counter(truth)
    for p, t in zip(predicted, truth):
        pred_truths[p][t] += 1
    correct = 0
    for truths in pred_truths.values():
        if len(truths) == 1:
            (t, n), = truths.items()
            if true_sizes[t] == n:
                correct += n
    return correct / len(predicted)


def run(lines, truth, masked):
    config = TemplateMinerConfig()
    config.profiling_enabled = False
    if masked:
        config.masking_instructions = [
            MaskingInstruction(r"((?<=[^A-Za-z0-9])|^)(([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}))((?=[^A-Za-z0-9])|$)", "UUID"),
            MaskingInstruction(r"((?<=[^A-Za-z0-9])|^)(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})((?=[^A-Za-z0-9])|$)", "IP"),
            MaskingInstruction(r"((?<=[^A-Za-z0-9])|^)(0x[a-f0-9A-F]+)((?=[^A-Za-z0-9])|$)", "HEX"),
            MaskingInstruction(r"((?<=[^A-Za-z0-9])|^)([\-\+]?\d+)((?=[^A-Za-z0-9])|$)", "NUM"),
        ]
    miner = TemplateMiner(config=config)
    start = time.process_time()
    predicted = [miner.add_log_message(line)["cluster_id"] for line in lines]
    secs = time.process_time() - start
    return accuracy(predicted, truth), secs, len(miner.drain.clusters)


def main():
    path, truth_path = sys.argv[1], sys.argv[2]
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    with open(truth_path, encoding="utf-8") as f:
        truth = [int(x) for x in f.read().split()]
    assert len(lines) == len(truth), (len(lines), len(truth))
    size = sum(len(l) + 1 for l in lines)
    for masked in (False, True):
        acc, secs, clusters = run(lines, truth, masked)
        print(
            f"drain3 {'masked' if masked else 'default'}: grouping_accuracy {acc:.4} "
            f"seconds {secs:.2f} MB/s {size / 1e6 / secs:.2f} clusters {clusters}"
        )


if __name__ == "__main__":
    main()
