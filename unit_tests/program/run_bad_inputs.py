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
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))
import fixtures  # noqa: E402
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


# The shared spin-boson (../fixtures/), long enough to compute for minutes at depth 12.
SMALL_RUN = fixtures.spin_boson({"hierarchy": {"depth": 12}, "dynamics": {"t_end": 2000.0, "output_every": 1.0}})


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


def answered_at_once(heom, args, work, expected_exit, expected, seconds=5):
    """Runs `heom args` in `work`; a problem unless it exits with `expected_exit` within `seconds`, with
    (for a refusal) one line on stderr that contains `expected` and no 300-digit number in it."""
    import time
    start = time.monotonic()
    try:
        r = subprocess.run([heom] + args, cwd=work, capture_output=True, text=True, timeout=seconds)
    except subprocess.TimeoutExpired:
        return f"no answer within {seconds} s"
    took = time.monotonic() - start
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    if r.returncode != expected_exit:
        return f"exit {r.returncode}, expected {expected_exit} ({took:.1f} s): {r.stderr.strip()!r}"
    if expected_exit != 0 and (len(lines) != 1 or expected not in lines[0] or len(lines[0]) > 200):
        return f"expected one short line naming {expected!r}, got {lines!r}"
    return None


def command_line_checks(heom):
    """What is wrong with the command line itself, answered at once in one line naming it (exit 2):
    counts out of range, an input path that is a folder; and an importance threshold at a depth whose
    labels could not be visited one by one, answered (with a plan) at once."""
    failures = []
    with tempfile.TemporaryDirectory() as work:
        open(os.path.join(work, "run.toml"), "w").write(SMALL_RUN)
        os.mkdir(os.path.join(work, "inputs"))
        deep = fixtures.spin_boson({"hierarchy": {"depth": 1000, "threshold": 1e-8}, "bath": {"terms": 5}})
        open(os.path.join(work, "deep.toml"), "w").write(deep)
        cases = [
            (["run", "run.toml", "--devices", "0"], 2, "--devices: must be a whole number >= 1, got 0"),
            (["run", "run.toml", "--threads", "0"], 2, "--threads: must be a whole number >= 1, got 0"),
            (["run", "run.toml", "--devices", "two"], 2, "--devices"),
            (["plan", "run.toml", "--device-ids", "-1"], 2, "--device-ids"),
            (["run", "inputs"], 2, "inputs: is a folder, not an input file"),
            (["plan", "deep.toml"], 0, ""),
        ]
        for args, exit_code, expected in cases:
            problem = answered_at_once(heom, args, work, exit_code, expected)
            print(("ok   " if not problem else "FAIL ") + " ".join(args) + (f": {problem}" if problem else ""))
            if problem:
                failures.append(" ".join(args))
    return failures


def refused_settings_checks(heom):
    """The settings every front end refuses (../fixtures/refused_settings.json): exit 2 at once, one
    line naming the key's table and the same words as the library's and Python's refusal."""
    failures = []
    with tempfile.TemporaryDirectory() as work:
        for r in fixtures.refused_settings():
            setting = f"{r['setting']} = {fixtures.toml_value(r['value'])}"
            open(os.path.join(work, "refused.toml"), "w").write(
                fixtures.spin_boson({r["table"]: {r["setting"]: r["value"]}}))
            problem = answered_at_once(heom, ["run", "refused.toml", "-o", "out.h5"], work, 2,
                                       f"{r['table']}.{r['message']}")
            if not problem and os.listdir(work) != ["refused.toml"]:
                problem = f"left files behind: {os.listdir(work)}"
            print(("ok   " if not problem else "FAIL ") + setting + (f": {problem}" if problem else ""))
            if problem:
                failures.append(setting)
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
    failures += command_line_checks(heom)
    failures += refused_settings_checks(heom)
    print(f"{len(cases) - len(failures)} of {len(cases)} bad inputs handled as expected")
    if len(cases) < 25:
        sys.exit(f"only {len(cases)} bad-input cases; the suite needs at least 25")
    if failures:
        sys.exit(1)


if __name__ == "__main__":
    main()
