"""The README's "From Python" code runs as written, and so does the quickstart."""
import os
import re
import subprocess
import sys

import numpy as np

from conftest import SOURCE_DIR


def test_the_readme_python_example_runs_as_written():
    readme = (SOURCE_DIR / "README.md").read_text()
    section = readme.split("## From Python", 1)[1].split("\n## ", 1)[0]
    code = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(code) == 1
    scope = {}
    exec(compile(code[0], "README.md", "exec"), scope)
    assert scope["result"].states.shape == (201, 2, 2)
    assert scope["info"]["residual"] <= 1e-10
    # Relaxing towards the steady state: <sigma_z> at t = 20 is near the steady state's.
    assert abs(scope["result"].expect(scope["sz"])[-1] - np.trace(scope["sz"] @ scope["rho_ss"]).real) < 0.05


def test_the_quickstart_agrees_with_qutip():
    env = dict(os.environ)
    run = subprocess.run([sys.executable, str(SOURCE_DIR / "example" / "quickstart.py")], env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "largest difference of <sigma_z>(t)" in run.stdout
