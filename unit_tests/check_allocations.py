"""Every device View heom makes goes through heom::impl::allocate, allocate_zeroed or to_device (with
the execution-space instance it is for): Kokkos allocates on that instance's device, and several GPUs
in one process need each device's Views on its own GPU. A View made another way lands on the default
GPU, which only a machine with several GPUs would show. This finds such constructions in the sources.

    check_allocations.py SOURCE_ROOT
"""

import pathlib
import re
import sys

# The one place allowed to call Kokkos::view_alloc.
HELPER = pathlib.Path("include/heom/core/to_device.hpp")
FORBIDDEN = [
    (re.compile(r"\bview_alloc\s*\("), "Kokkos::view_alloc outside impl::allocate"),
    # A View-typed temporary built from a label: vector_type("heom::..", n) (a sparse matrix_type
    # wraps Views made before).
    (re.compile(r"\b(?!matrix_type)\w*(?:vector|_type|table|view)(?:<[^;()]*>)?\s*\(\s*\"heom::"),
     "a View made from a label"),
    # ... or a variable: vector_type v("heom::..", n).
    (re.compile(r"\b(?!return\b)\w+(?:<[^;()]*>)?\s+\w+\s*\(\s*\"heom::"), "a View made from a label"),
]
# Host-only Views (HostSpace mirrors) may be made directly.
HOST = re.compile(r"HostSpace|HostMirror|Profiling|Region|parallel_|Error\(|throw ")


def main():
    root = pathlib.Path(sys.argv[1])
    problems = []
    for folder in ("include", "src", "python/src"):
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in (".hpp", ".cpp") or path.relative_to(root) == HELPER:
                continue
            for number, line in enumerate(path.read_text().splitlines(), 1):
                code = line.split("//")[0]
                if HOST.search(code):
                    continue
                for pattern, what in FORBIDDEN:
                    if pattern.search(code):
                        problems.append(f"{path.relative_to(root)}:{number}: {what}: {line.strip()}")
                        break
    for p in problems:
        print(p)
    if problems:
        sys.exit(f"{len(problems)} device allocations bypass impl::allocate (the instance's device)")
    print("every device allocation names its instance")


if __name__ == "__main__":
    main()
