#!/usr/bin/python3
"""The heom program's bad-input suite. Every file in bad_inputs/ starts with two comment lines,

    # expect-exit: 2
    # expect-message: bath[1].gamma

and must make `heom run FILE -o out.h5` exit with that code and print exactly one line on stderr
that contains the expected text, leaving no output (or temporary) file behind.

    run_bad_inputs.py HEOM_EXECUTABLE
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRESS = re.compile(r"^heom: t = \S+ / \S+ .*elapsed .*ETA ")


def expectations(path):
    exit_code, message = None, None
    with open(path) as f:
        for line in f:
            if line.startswith("# expect-exit:"):
                exit_code = int(line.split(":", 1)[1])
            elif line.startswith("# expect-message:"):
                message = line.split(":", 1)[1].strip()
    if exit_code is None or message is None:
        sys.exit(f"{path}: missing '# expect-exit:' or '# expect-message:' header")
    return exit_code, message


SMALL_RUN = """
[system]
hamiltonian = [[0.25, 0.5], [0.5, -0.25]]
[[bath]]
kind = "drude-lorentz"
coupling = [[1, 0], [0, -1]]
lambda = 0.1
gamma = 0.5
temperature = 0.5
terms = 2
[hierarchy]
depth = 12
[initial_state]
rho = [[1, 0], [0, 0]]
[dynamics]
t_end = 2000.0
output_every = 1.0
"""


def output_path_checks(heom):
    """An output the run could not write is refused before the run (exit 2, one line naming the path),
    not after it: the input here would compute for minutes."""
    failures = []
    with tempfile.TemporaryDirectory() as work:
        open(os.path.join(work, "run.toml"), "w").write(SMALL_RUN)
        os.mkdir(os.path.join(work, "folder.h5"))
        for output, expected in [("missing/out.h5", "its folder missing does not exist"),
                                 ("folder.h5", "folder.h5: it is a folder")]:
            r = subprocess.run([heom, "run", "run.toml", "-o", output], cwd=work, capture_output=True, text=True,
                               timeout=60)
            lines = [l for l in r.stderr.splitlines() if l.strip()]
            ok = r.returncode == 2 and len(lines) == 1 and expected in lines[0] and "output.file" in lines[0]
            print(("ok   " if ok else "FAIL ") + f"-o {output}: exit {r.returncode}: {r.stderr.strip()!r}")
            if not ok:
                failures.append(output)
    return failures


def main():
    heom = os.path.abspath(sys.argv[1])
    cases = sorted(glob.glob(os.path.join(HERE, "bad_inputs", "*.toml")))
    failures = []
    for case in cases:
        exit_code, message = expectations(case)
        with tempfile.TemporaryDirectory() as work:
            r = subprocess.run([heom, "run", case, "-o", "out.h5", "--threads", "1"], cwd=work,
                               capture_output=True, text=True, timeout=300)
            left = os.listdir(work)
        # Progress reports (a line every few seconds when stderr is not a terminal) may precede the
        # error of a run that fails late; the error itself must be one line.
        lines = [l for l in r.stderr.splitlines() if l.strip() and not PROGRESS.match(l)]
        problems = []
        if r.returncode != exit_code:
            problems.append(f"exit {r.returncode}, expected {exit_code}")
        if len(lines) != 1:
            problems.append(f"{len(lines)} lines on stderr, expected 1: {lines!r}")
        if message not in r.stderr:
            problems.append(f"stderr does not name {message!r}: {r.stderr.strip()!r}")
        if left:
            problems.append(f"left files behind: {left}")
        name = os.path.basename(case)
        if problems:
            failures.append(name)
            print(f"FAIL {name}: " + "; ".join(problems))
        else:
            print(f"ok   {name}: exit {r.returncode}: {lines[0]}")
    failures += output_path_checks(heom)
    print(f"{len(cases) - len(failures)} of {len(cases)} bad inputs handled as expected")
    if len(cases) < 25:
        sys.exit(f"only {len(cases)} bad-input cases; the suite needs at least 25")
    if failures:
        sys.exit(1)


if __name__ == "__main__":
    main()
