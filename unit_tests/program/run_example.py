#!/usr/bin/python3
"""Runs the heom program on an example input in a scratch folder and checks its HDF5 output against
QuTiP reference data (check_output.py).

    run_example.py HEOM INPUT.toml REFERENCE.json TOLERANCE [--ados] [--plot]
    run_example.py HEOM --bundled REFERENCE.json TOLERANCE   (`heom` alone must write fmo.h5)
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_output import check  # noqa: E402


def main():
    heom, source, reference, tolerance = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3], float(sys.argv[4])
    ados = "--ados" in sys.argv[5:]
    plot = "--plot" in sys.argv[5:]
    with tempfile.TemporaryDirectory() as work:
        if source == "--bundled":
            command, output, input_file = [heom], os.path.join(work, "fmo.h5"), None
        else:
            input_file = os.path.abspath(source)
            text = open(input_file).read()
            if ados:  # ask for the final ADOs too
                if "[output]" in text:
                    text = text.replace("[output]\n", "[output]\nados = true\n")
                else:
                    text += "\n[output]\nados = true\n"
                input_file = os.path.join(work, os.path.basename(source))
                open(input_file, "w").write(text)
            output = os.path.join(work, "out.h5")
            command = [heom, "run", input_file, "-o", output]
        r = subprocess.run(command, cwd=work, capture_output=True, text=True, timeout=1800)
        sys.stdout.write(r.stdout)
        sys.stderr.write(r.stderr)
        if r.returncode != 0:
            sys.exit(f"FAIL: {' '.join(command)} exited with {r.returncode}")
        leftovers = [f for f in os.listdir(work) if ".tmp." in f]
        if leftovers:
            sys.exit(f"FAIL: temporary files left behind: {leftovers}")
        check(output, reference, tolerance, input_file, ados)
        if plot:  # example/plot.py must turn the output into a PNG
            script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "example", "plot.py")
            png = os.path.join(work, "plot.png")
            subprocess.run([sys.executable, script, output, png], check=True, timeout=300)
            with open(png, "rb") as f:
                if f.read(8) != b"\x89PNG\r\n\x1a\n":
                    sys.exit("FAIL: example/plot.py did not write a PNG")


if __name__ == "__main__":
    main()
