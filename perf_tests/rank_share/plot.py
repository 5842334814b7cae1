"""plot.py BEFORE AFTER OUT.png: the largest peak RSS of a rank against the ranks, from measure.sh's
lines ("TAG P=<ranks> <KB> KB <s> s"), before and after."""
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def largest_per_rank_count(path):
    largest = {}
    for line in open(path):
        for p, kb in re.findall(r"P=(\d+) (\d+) KB", line):
            largest[int(p)] = max(largest.get(int(p), 0), int(kb) / 1024)
    return sorted(largest.items())


before, after, out = sys.argv[1:4]
fig, ax = plt.subplots(figsize=(5, 3.5))
for path, label in ((before, "every rank holds the whole hierarchy"), (after, "a rank holds its share")):
    points = largest_per_rank_count(path)
    ax.plot([p for p, _ in points], [m for _, m in points], "o-", label=label)
ranks = [p for p, _ in largest_per_rank_count(after)]
one = dict(largest_per_rank_count(after))[1]
ax.plot(ranks, [one / p for p in ranks], ":", color="gray", label="1 rank's / P")
ax.set_xscale("log", base=2)
ax.set_yscale("log")
ax.set_xlabel("MPI ranks P")
ax.set_ylabel("peak RSS of the largest rank (MB)")
ax.set_title("1,961,256 ADOs (K = 14, depth 10, n = 2)", fontsize=10)
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(out, dpi=120)
