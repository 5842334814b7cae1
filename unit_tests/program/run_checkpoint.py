#!/usr/bin/python3
"""Checkpoints, signals and restarts of `heom run` (docs/program.md, "Checkpoints and signals"):

- a run stopped by SIGTERM at a chosen step (sent by the program to itself through the test hook
  HEOM_TEST_SIGNAL, and by this script from outside) exits 3 with a checkpoint and the partial output,
  and `--resume` then writes an output file byte for byte the uninterrupted run's (once the measured
  wall time is set equal), for exp-adams and dopri5;
- periodic checkpoints (`--checkpoint-every`, [output] checkpoint_every) are numbered and announced;
- a second signal while a checkpoint is being written exits at once, 128 + the signal, and leaves
  the previous checkpoint complete and no temporary file;
- a missing, corrupt, truncated or mismatched checkpoint is refused with exit 2 and one line naming
  the problem, before anything is computed or overwritten;
- a hierarchy split over devices (--devices, mpirun) writes one file per device and resumes on any
  number of devices with the same bits;
- the lead currents over time (/current) of a run with fermionic leads survive a stop on two devices
  and a resume on one with the same bits.

    run_checkpoint.py HEOM_EXECUTABLE EXAMPLE_DIR [MPIEXEC]
"""
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

EXIT_STOPPED = 3


def check(condition, message):
    if not condition:
        sys.exit("FAILED: " + message)


def run(args, cwd, env=None, timeout=300):
    full_env = dict(os.environ, OMP_PROC_BIND="false", **(env or {}))
    return subprocess.run(args, cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout)


def fmo_input(example_dir, work, method, depth=4, name=None):
    """The FMO example (1209 exp-adams steps at depth 4) with `method` and `depth`."""
    with open(os.path.join(example_dir, "fmo_77k.toml")) as f:
        text = f.read()
    text = re.sub(r"(?m)^depth = \d+", f"depth = {depth}", text)
    text = re.sub(r'(?m)^method = "[a-z0-9-]+"', f'method = "{method}"', text)
    check(f'method = "{method}"' in text and f"depth = {depth}" in text, "could not set the method and depth")
    path = os.path.join(work, name or f"fmo_{method}_{depth}.toml")
    with open(path, "w") as f:
        f.write(text)
    return path


def normalized_bytes(path, work):
    """The file's bytes with its wall time (which no two runs share) set to zero."""
    copy = os.path.join(work, "normalized.h5")
    shutil.copy(path, copy)
    with h5py.File(copy, "r+") as f:
        f.attrs.modify("wall_time_s", 0.0)
    with open(copy, "rb") as f:
        return f.read()


def stopped(result, what):
    check(result.returncode == EXIT_STOPPED, f"{what}: exit {result.returncode}, expected {EXIT_STOPPED}:\n"
          + result.stderr)
    check("after a checkpoint" in result.stderr and "--resume" in result.stderr,
          f"{what}: the stop message:\n{result.stderr}")


def leftovers(work):
    return [f for f in os.listdir(work) if ".tmp." in f]


def check_stop_and_resume(heom, example_dir, work, method):
    model = fmo_input(example_dir, work, method)
    whole = run([heom, "run", model, "-o", "whole.h5"], work)
    check(whole.returncode == 0, f"{method}: the uninterrupted run failed:\n{whole.stderr}")

    first = run([heom, "run", model, "-o", "out.h5"], work, {"HEOM_TEST_SIGNAL": "0:40"})
    stopped(first, method)
    check(not os.path.exists(os.path.join(work, "out.h5")), "a stopped run wrote the final output")
    checkpoint = os.path.join(work, "out.checkpoint.h5")
    with h5py.File(checkpoint) as c, h5py.File(os.path.join(work, "out.partial.h5")) as p, \
            h5py.File(os.path.join(work, "whole.h5")) as w:
        check(c.attrs["steps"] == 40 and c.attrs["sequence"] == 1 and c.attrs["parts"] == 1,
              f"{method}: checkpoint attributes {dict(c.attrs)}")
        done = p["t"].shape[0]
        check(0 < done < w["t"].shape[0], f"{method}: the partial output has {done} times")
        check(np.array_equal(p["rho"][...], w["rho"][:done]), f"{method}: the partial output differs")
        check(np.array_equal(c["output/rho"][...], w["rho"][:done]), f"{method}: the checkpoint's output differs")
        check(w["t"][done - 1] <= c.attrs["time"] < w["t"][done], f"{method}: outputs up to the checkpoint's time")

    resumed = run([heom, "run", model, "-o", "out.h5", "--resume", "out.checkpoint.h5"], work)
    check(resumed.returncode == 0, f"{method}: the resumed run failed:\n{resumed.stderr}")
    check("resumed     at t = " in resumed.stdout, f"{method}: the plan does not say it resumed")
    check(normalized_bytes(os.path.join(work, "out.h5"), work) == normalized_bytes(os.path.join(work, "whole.h5"), work),
          f"{method}: the resumed output is not the uninterrupted output's bytes")
    check(not os.path.exists(checkpoint) and not os.path.exists(os.path.join(work, "out.partial.h5")),
          f"{method}: the finished run left its checkpoint or partial output")
    check(not leftovers(work), f"{method}: temporary files left: {leftovers(work)}")
    print(f"ok   {method}: stopped after step 40, resumed, the same bytes as the uninterrupted run")
    return model


def check_periodic(heom, example_dir, work, model):
    # --checkpoint-every, twice, and a stop after step 60: checkpoints after steps 25 and 50, then 60.
    r = run([heom, "run", model, "-o", "periodic.h5", "--checkpoint-every", "1 h", "--checkpoint-every", "25 steps"],
            work, {"HEOM_TEST_SIGNAL": "0:60"})
    stopped(r, "periodic")
    check("checkpoints every 1:00:00 or 25 steps -> periodic.checkpoint.h5" in r.stdout, "the plan:\n" + r.stdout)
    check(r.stderr.count("heom: checkpoint t = ") == 3, "three checkpoints announced:\n" + r.stderr)
    with h5py.File(os.path.join(work, "periodic.checkpoint.h5")) as c:
        check(c.attrs["sequence"] == 3 and c.attrs["steps"] == 60, f"periodic: {dict(c.attrs)}")
    # [output] checkpoint_every and checkpoint_file.
    with open(model) as f:
        text = f.read()
    text = re.sub(r'(?m)^file = ".*"$', 'file = "table.h5"\ncheckpoint_every = "30 steps"\n'
                  'checkpoint_file = "kept/table_state.h5"', text)
    table = os.path.join(work, "table.toml")
    with open(table, "w") as f:
        f.write(text)
    os.makedirs(os.path.join(work, "kept"), exist_ok=True)
    r = run([heom, "run", table, "-o", "table_whole.h5", "--checkpoint-file", "unused.h5"], work)
    check(r.returncode == 0 and not os.path.exists(os.path.join(work, "unused.h5")), "the table's uninterrupted run")
    r = run([heom, "run", table], work, {"HEOM_TEST_SIGNAL": "0:70"})
    stopped(r, "[output] checkpoint_every")
    with h5py.File(os.path.join(work, "kept", "table_state.h5")) as c:
        check(c.attrs["sequence"] == 3 and c.attrs["steps"] == 70, f"[output] checkpoint_every: {dict(c.attrs)}")
    r = run([heom, "run", table, "--resume", "kept/table_state.h5"], work)
    check(r.returncode == 0 and r.stderr.count("heom: checkpoint t = ") > 5, "resumed with periodic checkpoints")
    check(normalized_bytes(os.path.join(work, "table.h5"), work) ==
          normalized_bytes(os.path.join(work, "table_whole.h5"), work),
          "the table-configured run's output differs from the uninterrupted run's")
    print("ok   periodic checkpoints: numbered, announced, resumed from the last one")


def wait_for(process, pattern, timeout=120):
    """Reads the process's stderr until a line contains `pattern`; returns what was read."""
    seen = []
    deadline = time.time() + timeout
    while time.time() < deadline:
        line = process.stderr.readline()
        if not line:
            break
        seen.append(line)
        if pattern in line:
            return "".join(seen)
    process.kill()
    sys.exit(f"FAILED: no {pattern!r} on stderr; saw:\n" + "".join(seen))


def check_external_signals(heom, example_dir, work):
    """Signals from outside, at whatever step they land: SIGTERM and SIGINT stop with a checkpoint that
    resumes to the same bytes; a second signal during a checkpoint write exits at once."""
    model = fmo_input(example_dir, work, "exp-adams", depth=5)
    whole = run([heom, "run", model, "-o", "deep_whole.h5"], work)
    check(whole.returncode == 0, "the depth-5 run failed:\n" + whole.stderr)
    env = dict(os.environ, OMP_PROC_BIND="false")
    for number, name in [(signal.SIGTERM, "SIGTERM"), (signal.SIGINT, "SIGINT")]:
        process = subprocess.Popen([heom, "run", model, "-o", "deep.h5", "--checkpoint-every", "50 steps"], cwd=work,
                                   env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wait_for(process, "heom: checkpoint t = ")
        process.send_signal(number)
        err = process.stderr.read()
        process.wait(timeout=120)
        check(process.returncode == EXIT_STOPPED, f"{name}: exit {process.returncode}:\n{err}")
        check(f"stopped by {name}" in err, f"{name}: the stop message:\n{err}")
        r = run([heom, "run", model, "-o", "deep.h5", "--resume", "deep.checkpoint.h5"], work)
        check(r.returncode == 0, f"{name}: the resumed run failed:\n{r.stderr}")
        check(normalized_bytes(os.path.join(work, "deep.h5"), work) ==
              normalized_bytes(os.path.join(work, "deep_whole.h5"), work), f"{name}: the resumed output differs")
        os.remove(os.path.join(work, "deep.h5"))
        print(f"ok   {name} from outside: exit 3, resumed to the same bytes")

    # A second signal while the stop's checkpoint is being written (each write held 3 s before its rename).
    process = subprocess.Popen([heom, "run", model, "-o", "deep.h5", "--checkpoint-every", "50 steps"], cwd=work,
                               env=dict(env, HEOM_TEST_CHECKPOINT_DELAY="3"), stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    wait_for(process, "heom: checkpoint t = ")  # the first, complete
    process.send_signal(signal.SIGTERM)  # the next step boundary starts another write...
    time.sleep(1.5)
    process.send_signal(signal.SIGTERM)  # ... which this one interrupts
    err = process.stderr.read()
    process.wait(timeout=60)
    check(process.returncode == 128 + signal.SIGTERM, f"second signal: exit {process.returncode}:\n{err}")
    check("second signal" in err, "second signal: the message:\n" + err)
    check(not leftovers(work), f"second signal: temporary files left: {leftovers(work)}")
    with h5py.File(os.path.join(work, "deep.checkpoint.h5")) as c:
        check(c.attrs["sequence"] == 1 and c.attrs["steps"] == 50, f"second signal: the kept checkpoint {dict(c.attrs)}")
    r = run([heom, "run", model, "-o", "deep.h5", "--resume", "deep.checkpoint.h5"], work)
    check(r.returncode == 0 and normalized_bytes(os.path.join(work, "deep.h5"), work) ==
          normalized_bytes(os.path.join(work, "deep_whole.h5"), work), "second signal: resuming the kept checkpoint")
    print("ok   a second signal during a checkpoint write: exit 143, the previous checkpoint intact")

    # The same on two devices: part 0 goes into place last, so the previous checkpoint's parts survive.
    two = dict(env, HEOM_TEST_CHECKPOINT_DELAY="3", OMP_NUM_THREADS="2")
    process = subprocess.Popen([heom, "run", model, "-o", "deep2.h5", "--devices", "2", "--checkpoint-every",
                                "50 steps"], cwd=work, env=two, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
    wait_for(process, "heom: checkpoint t = ")
    process.send_signal(signal.SIGTERM)
    time.sleep(1.5)
    process.send_signal(signal.SIGTERM)
    err = process.stderr.read()
    process.wait(timeout=60)
    check(process.returncode == 128 + signal.SIGTERM, f"second signal, 2 devices: exit {process.returncode}:\n{err}")
    check(not leftovers(work), f"second signal, 2 devices: temporary files left: {leftovers(work)}")
    with h5py.File(os.path.join(work, "deep2.checkpoint.h5")) as c:
        check(c.attrs["sequence"] == 1 and c.attrs["parts"] == 2, f"second signal, 2 devices: {dict(c.attrs)}")
    r = run([heom, "run", model, "-o", "deep2.h5", "--resume", "deep2.checkpoint.h5"], work)
    check(r.returncode == 0, "second signal, 2 devices: resuming the kept checkpoint:\n" + r.stderr)
    with h5py.File(os.path.join(work, "deep2.h5")) as a, h5py.File(os.path.join(work, "deep_whole.h5")) as b:
        check(np.array_equal(a["rho"][...], b["rho"][...]), "second signal, 2 devices: rho differs")
    print("ok   ... and on two devices: the previous checkpoint's parts intact")


def check_bad_checkpoints(heom, example_dir, work, model):
    """Refused before the run, exit 2 and one line, nothing overwritten."""
    r = run([heom, "run", model, "-o", "bad.h5"], work, {"HEOM_TEST_SIGNAL": "0:40"})
    stopped(r, "bad checkpoints")
    good = os.path.join(work, "bad.checkpoint.h5")
    with open(good, "rb") as f:
        content = f.read()
    with open(os.path.join(work, "truncated.h5"), "wb") as f:
        f.write(content[: len(content) // 2])
    with open(os.path.join(work, "text.h5"), "w") as f:
        f.write("not a checkpoint\n")
    with open(os.path.join(work, "bad.h5"), "w") as f:
        f.write("an earlier output, kept\n")
    deeper = fmo_input(example_dir, work, "exp-adams", depth=3, name="deeper.toml")
    with open(model) as f:
        looser_text = f.read().replace("rtol = 1e-8", "rtol = 1e-6")
    check("rtol = 1e-6" in looser_text, "could not change rtol")
    looser = os.path.join(work, "looser.toml")
    with open(looser, "w") as f:
        f.write(looser_text)
    dopri5 = fmo_input(example_dir, work, "dopri5", name="dopri5.toml")
    cases = [(model, "missing.h5", "checkpoint missing.h5: it does not exist"),
             (model, "truncated.h5", "it is truncated, or not an HDF5 file"),
             (model, "text.h5", "it is truncated, or not an HDF5 file"),
             (model, "whole.h5", "it is not a heom checkpoint"),
             (deeper, "bad.checkpoint.h5", "was written for depth 4, not 3"),
             (looser, "bad.checkpoint.h5", "was written for rtol 1e-08, not 1e-06"),
             (dopri5, "bad.checkpoint.h5", "was written for method exp-adams, not dopri5")]
    for toml, resume, expected in cases:
        # (--checkpoint-file: a run resuming from another file would not overwrite bad.checkpoint.h5 either)
        r = run([heom, "run", toml, "-o", "bad.h5", "--resume", resume, "--checkpoint-file", "new.h5"], work)
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        check(r.returncode == 2 and len(lines) == 1 and expected in lines[0] and "--resume" in lines[0],
              f"--resume {resume} with {os.path.basename(toml)}: exit {r.returncode}: {r.stderr!r}")
        check("generator" not in r.stdout, f"--resume {resume}: the run started before the refusal")
        with open(good, "rb") as f:
            check(f.read() == content, "a refused resume changed the checkpoint")
        with open(os.path.join(work, "bad.h5")) as f:
            check(f.read() == "an earlier output, kept\n", "a refused resume overwrote the output")
        print(f"ok   --resume {resume} ({os.path.basename(toml)}): {lines[0]}")
    # A flipped byte inside a vector's data: its chunk's checksum fails when the run reads it.
    damaged = os.path.join(work, "damaged.h5")
    shutil.copy(good, damaged)
    with h5py.File(damaged) as f:
        offset = f["integrator/vectors/y"].id.get_chunk_info(0).byte_offset
    with open(damaged, "r+b") as f:
        f.seek(offset + 1000)
        byte = f.read(1)
        f.seek(offset + 1000)
        f.write(bytes([byte[0] ^ 0x10]))
    r = run([heom, "run", model, "-o", "bad.h5", "--resume", "damaged.h5", "--checkpoint-file", "new.h5"], work)
    check(r.returncode == 2 and "--resume: checkpoint damaged.h5" in r.stderr and "/integrator/vectors/y (it is damaged" in r.stderr,
          f"a damaged vector: exit {r.returncode}: {r.stderr!r}")
    with open(os.path.join(work, "bad.h5")) as f:
        check(f.read() == "an earlier output, kept\n", "a damaged checkpoint's resume overwrote the output")
    print("ok   a damaged vector fails its checksum: " + r.stderr.strip().splitlines()[-1])

    # A stopped run's checkpoint is not overwritten by starting the run again without --resume, or by
    # resuming another checkpoint.
    for extra in [[], ["--resume", "whole_stop.h5"]]:
        if extra:
            r = run([heom, "run", model, "-o", "other.h5", "--checkpoint-file", "whole_stop.h5"], work,
                    {"HEOM_TEST_SIGNAL": "0:20"})
            stopped(r, "another checkpoint")
        r = run([heom, "run", model, "-o", "bad.h5"] + extra, work)
        check(r.returncode == 2 and "bad.checkpoint.h5 exists" in r.stderr and "--resume" in r.stderr,
              f"starting again over a checkpoint ({extra}): exit {r.returncode}: {r.stderr!r}")
    with open(good, "rb") as f:
        check(f.read() == content, "starting again changed the checkpoint")
    # Part 1 of a two-part checkpoint (number 4, "-even") replaced by part 1 of another one (number 1, "-odd").
    r = run([heom, "run", model, "-o", "two.h5", "--devices", "2"], work,
            {"HEOM_TEST_SIGNAL": "1:30", "OMP_NUM_THREADS": "2"})
    stopped(r, "two parts")
    r = run([heom, "run", model, "-o", "three.h5", "--devices", "2", "--checkpoint-every", "10 steps"], work,
            {"HEOM_TEST_SIGNAL": "1:31", "OMP_NUM_THREADS": "2"})
    stopped(r, "two parts, again")
    with h5py.File(os.path.join(work, "three.checkpoint.h5")) as c:
        check(c.attrs["sequence"] == 4, "two parts, again: checkpoint number " + str(c.attrs["sequence"]))
    shutil.copy(os.path.join(work, "two.checkpoint.part1-odd.h5"), os.path.join(work, "three.checkpoint.part1-even.h5"))
    r = run([heom, "run", model, "-o", "three.h5", "--resume", "three.checkpoint.h5"], work)
    check(r.returncode == 2 and "is not part 1 of the same checkpoint" in r.stderr,
          f"mixed parts: exit {r.returncode}: {r.stderr!r}")
    print("ok   starting again over a checkpoint, and parts of different checkpoints, are refused")


def check_devices(heom, example_dir, work, model, mpiexec):
    """One file per device; a restart on the same or another number of devices gives the same bits."""
    with h5py.File(os.path.join(work, "whole.h5")) as w:
        reference = w["rho"][...]
        steps = w.attrs["steps"]

    def same_as_one_device(path, what):
        with h5py.File(os.path.join(work, path)) as f:
            check(np.array_equal(f["rho"][...], reference) and f.attrs["steps"] == steps,
                  f"{what}: rho or the steps differ from one device's")

    four = {"OMP_NUM_THREADS": "4"}
    r = run([heom, "run", model, "-o", "split.h5", "--devices", "2"], work, dict(four, HEOM_TEST_SIGNAL="1:40"))
    stopped(r, "--devices 2")
    check(os.path.exists(os.path.join(work, "split.checkpoint.part1-odd.h5")), "--devices 2: no part 1")
    for devices in ["2", "3", "1"]:
        saved = {p: open(os.path.join(work, p), "rb").read() for p in os.listdir(work) if p.startswith("split.checkpoint")}
        r = run([heom, "run", model, "-o", "split.h5", "--devices", devices, "--resume", "split.checkpoint.h5"], work,
                four)
        check(r.returncode == 0, f"resumed on {devices} devices:\n{r.stderr}")
        same_as_one_device("split.h5", f"stopped on 2 devices, resumed on {devices}")
        left = [p for p in os.listdir(work) if p.startswith("split.checkpoint")]
        check(not left, f"resumed on {devices} devices: the finished run left {left}")
        for p, content in saved.items():  # (put the checkpoint back for the next restart)
            open(os.path.join(work, p), "wb").write(content)
        print(f"ok   stopped on 2 devices, resumed on {devices}: one device's bits")
    if not mpiexec:
        return
    mpi = [mpiexec, "-n", "2", "--oversubscribe"]
    env = {"OMP_NUM_THREADS": "1", "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    r = run(mpi + [heom, "run", model, "-o", "ranks.h5"], work, dict(env, HEOM_TEST_SIGNAL="1:40"))
    check(r.returncode == EXIT_STOPPED and "after a checkpoint" in r.stderr, f"mpirun -n 2: exit {r.returncode}:\n"
          + r.stderr)
    r = run(mpi + [heom, "run", model, "-o", "ranks.h5", "--resume", "ranks.checkpoint.h5"], work, env)
    check(r.returncode == 0, "mpirun -n 2, resumed:\n" + r.stderr)
    same_as_one_device("ranks.h5", "stopped and resumed on 2 ranks")
    print("ok   mpirun -n 2: stopped by a signal on rank 1, resumed on 2 ranks: one device's bits")


def check_lead_currents(heom, example_dir, work):
    """example/anderson_impurity.toml at depth 3: /current is in the checkpoint and the resumed output."""
    with open(os.path.join(example_dir, "anderson_impurity.toml")) as f:
        text = re.sub(r"(?m)^depth = \d+", "depth = 3", f.read())
    model = os.path.join(work, "leads.toml")
    with open(model, "w") as f:
        f.write(text)
    whole = run([heom, "run", model, "-o", "leads_whole.h5"], work)
    check(whole.returncode == 0, "the leads' uninterrupted run failed:\n" + whole.stderr)
    two = {"OMP_NUM_THREADS": "2"}
    r = run([heom, "run", model, "-o", "leads.h5", "--devices", "2"], work, dict(two, HEOM_TEST_SIGNAL="1:30"))
    stopped(r, "leads on 2 devices")
    with h5py.File(os.path.join(work, "leads_whole.h5")) as w, \
            h5py.File(os.path.join(work, "leads.checkpoint.h5")) as c:
        current = w["current"][...]
        done = c["output/rho"].shape[0]
        check(current.shape == (w["t"].shape[0], 2), f"/current has shape {current.shape}")
        check(np.array_equal(c["output/current"][...], current[:done]), "the checkpoint's currents differ")
    # A checkpoint of a run with leads that holds no currents (as an older heom wrote) is refused.
    saved = open(os.path.join(work, "leads.checkpoint.h5"), "rb").read()
    with h5py.File(os.path.join(work, "leads.checkpoint.h5"), "a") as c:
        del c["output/current"]
    r = run([heom, "run", model, "-o", "leads.h5", "--resume", "leads.checkpoint.h5"], work, two)
    check(r.returncode == 2 and "holds no currents into the leads" in r.stderr and len(r.stderr.splitlines()) == 1,
          f"a checkpoint without currents: exit {r.returncode}: {r.stderr!r}")
    open(os.path.join(work, "leads.checkpoint.h5"), "wb").write(saved)
    r = run([heom, "run", model, "-o", "leads.h5", "--resume", "leads.checkpoint.h5"], work, two)
    check(r.returncode == 0, "the leads, resumed on 1 device:\n" + r.stderr)
    with h5py.File(os.path.join(work, "leads_whole.h5")) as w, h5py.File(os.path.join(work, "leads.h5")) as f:
        check(np.array_equal(f["current"][...], current) and np.array_equal(f["rho"][...], w["rho"][...]),
              "stopped on 2 devices, resumed on 1: /current or /rho differ from one device's")
    print(f"ok   leads: stopped on 2 devices after {done} outputs, resumed on 1: /current and /rho, one device's bits")


def main():
    heom, example_dir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    mpiexec = sys.argv[3] if len(sys.argv) > 3 else None
    with tempfile.TemporaryDirectory() as work:
        model = check_stop_and_resume(heom, example_dir, work, "exp-adams")
        with tempfile.TemporaryDirectory() as other:
            check_stop_and_resume(heom, example_dir, other, "dopri5")
        check_periodic(heom, example_dir, work, model)
        check_bad_checkpoints(heom, example_dir, work, model)
        check_devices(heom, example_dir, work, model, mpiexec)
        check_external_signals(heom, example_dir, work)
        check_lead_currents(heom, example_dir, work)
        check(not glob.glob(os.path.join(work, "*.tmp.*")), "temporary files left")
    print("all checkpoint checks passed")


if __name__ == "__main__":
    main()
