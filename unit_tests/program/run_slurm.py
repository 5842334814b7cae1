#!/usr/bin/python3
"""example/slurm/heom.sbatch, run as Slurm would run it, with stand-ins for srun (mpirun, or the
command itself on one rank) and scontrol (which records the requeue):

- the first allocation prints the memory plan, is stopped by the time-limit signal (sent through
  the test hook HEOM_TEST_SIGNAL, as Slurm's --signal=TERM@120 would), leaves a checkpoint and
  requeues the job;
- the requeued job continues from the checkpoint and writes rho(t) with the bits of an uninterrupted
  run on one device, then removes the checkpoint; a third start finds the run done and leaves it;
- a job whose share does not fit the GPU's memory ends with the plan's exit 2 before any srun.

    run_slurm.py HEOM EXAMPLE_DIR [MPIEXEC]
"""
import os
import re
import stat
import subprocess
import sys
import tempfile

import h5py
import numpy as np


def check(condition, message):
    if not condition:
        sys.exit("FAILED: " + message)


def executable(path, text):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)


def main():
    heom, example_dir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    mpiexec = sys.argv[3] if len(sys.argv) > 3 else None
    script = os.path.join(example_dir, "slurm", "heom.sbatch")
    ranks = 2 if mpiexec else 1
    with tempfile.TemporaryDirectory() as work:
        fake = os.path.join(work, "bin")
        os.mkdir(fake)
        launch = f'exec "{mpiexec}" -n "$SLURM_NTASKS" --oversubscribe "$@"' if mpiexec else 'exec "$@"'
        # (srun's own options, before the program, are not mpirun's.)
        executable(os.path.join(fake, "srun"), f'#!/bin/bash\necho "srun $*" >> "{work}/calls"\n'
                   f'while [[ "$1" == --* ]]; do shift; done\n{launch}\n')
        executable(os.path.join(fake, "scontrol"), f'#!/bin/bash\necho "scontrol $*" >> "{work}/calls"\n')
        with open(os.path.join(example_dir, "anderson_impurity.toml")) as f:
            text = re.sub(r"(?m)^depth = \d+", "depth = 3", f.read())
        model = os.path.join(work, "leads.toml")
        with open(model, "w") as f:
            f.write(text)
        env = dict(os.environ, PATH=fake + os.pathsep + os.environ["PATH"], HEOM=heom, SLURM_NTASKS=str(ranks),
                   SLURM_JOB_ID="4242", SLURM_CPUS_PER_TASK="1", OMPI_ALLOW_RUN_AS_ROOT="1",
                   OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")

        def job(extra=None):
            r = subprocess.run(["bash", script, model, "out.h5"], cwd=work, env=dict(env, **(extra or {})),
                               capture_output=True, text=True, timeout=600)
            calls = open(os.path.join(work, "calls")).read() if os.path.exists(os.path.join(work, "calls")) else ""
            if os.path.exists(os.path.join(work, "calls")):
                os.remove(os.path.join(work, "calls"))
            return r, calls

        reference = os.path.join(work, "whole.h5")
        r = subprocess.run([heom, "run", model, "-o", reference], cwd=work, capture_output=True, text=True,
                           env=dict(os.environ, OMP_NUM_THREADS="1"), timeout=600)
        check(r.returncode == 0, "the uninterrupted run failed:\n" + r.stderr)

        r, calls = job({"HEOM_TEST_SIGNAL": f"{ranks - 1}:30"})
        check(r.returncode == 0, f"first allocation: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
        check("memory" in r.stdout and calls.count("srun ") == 1, f"the plan, then one srun: {r.stdout}\n{calls!r}")
        check("scontrol requeue 4242" in calls, f"the stopped job did not requeue itself: {calls!r}")
        check(os.path.exists(os.path.join(work, "out.checkpoint.h5")) and not os.path.exists(os.path.join(work, "out.h5")),
              "the stopped job left no checkpoint, or an output")
        print(f"ok   first allocation ({ranks} rank{'s' if ranks > 1 else ''}): plan, stopped by the signal, "
              "checkpoint, requeued")

        r, calls = job()
        check(r.returncode == 0, f"requeued job: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
        check("--resume out.checkpoint.h5" in calls and "requeue" not in calls, f"the requeued job's calls: {calls!r}")
        check(not os.path.exists(os.path.join(work, "out.checkpoint.h5")), "the finished run left its checkpoint")
        with h5py.File(os.path.join(work, "out.h5")) as f, h5py.File(reference) as w:
            check(np.array_equal(f["rho"][()], w["rho"][()]) and np.array_equal(f["current"][()], w["current"][()]),
                  "the resumed job's rho(t) or /current differ from an uninterrupted run's")
        print("ok   requeued job: continued from the checkpoint, the uninterrupted run's bits")

        before = open(os.path.join(work, "out.h5"), "rb").read()
        r, calls = job()
        check(r.returncode == 0 and "nothing to do" in r.stdout and not calls, f"a third start: {r.stdout} {calls!r}")
        check(open(os.path.join(work, "out.h5"), "rb").read() == before, "a third start changed the output")
        print("ok   a third start finds the run complete")

        os.remove(os.path.join(work, "out.h5"))
        r, calls = job({"HEOM_DEVICE_MEMORY": "1KB"})
        check(r.returncode == 2 and not calls, f"a share too large: exit {r.returncode}, calls {calls!r}\n{r.stderr}")
        print("ok   a share too large for the GPU: the plan's exit 2, no srun: " + r.stderr.strip().splitlines()[-1])
    print("all Slurm job checks passed")


if __name__ == "__main__":
    main()
