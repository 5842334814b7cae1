#!/usr/bin/env bash
# Fuzzes the input reader (fuzz_input.cpp) with libFuzzer, AddressSanitizer and UBSan, from Debian's
# clang: builds the target from the reader's own sources (they need no Kokkos), seeds it with the
# examples, the bad-input suite and the corpus kept here, runs for SECONDS (default 600), and merges
# what it found into corpus/ (minimized). A crash is written to regressions/ to be kept as a test.
#
#   unit_tests/fuzz/run_fuzzer.sh [SECONDS]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
root="$(cd "$here/../.." && pwd -P)"
seconds="${1:-600}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
command -v clang++ >/dev/null || { echo "run_fuzzer.sh: needs clang++ (apt-get install clang)" >&2; exit 1; }

sources=(unit_tests/fuzz/fuzz_input.cpp src/io/toml_reader.cpp src/io/input.cpp src/io/input_bath.cpp
         src/io/input_steady.cpp src/io/input_spectrum.cpp src/io/input_ensemble.cpp src/io/units.cpp src/model/bath.cpp
         src/model/correlation.cpp src/model/exponent.cpp src/model/model.cpp src/core/matrix.cpp
         src/ensemble/disorder.cpp src/integrator/options.cpp src/solver/steady_state.cpp)
(cd "$root" && clang++ -std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I include -I src "${sources[@]}" -llapack -lblas -o "$work/fuzz_input")

mkdir -p "$work/seeds" "$work/found"
cp "$root"/example/*.toml "$root"/unit_tests/program/bad_inputs/*.toml "$work/seeds/"
cp "$here"/corpus/* "$here"/regressions/* "$work/seeds/" 2>/dev/null || true
# -rss_limit_mb: an input that makes the reader allocate gigabytes is a finding too.
status=0
"$work/fuzz_input" "$work/found" "$work/seeds" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -max_len=4096 -artifact_prefix="$here/regressions/" -print_final_stats=1 || status=$?
"$work/fuzz_input" -merge=1 "$here/corpus" "$work/found" >/dev/null 2>&1 || true
echo "run_fuzzer.sh: corpus has $(ls "$here/corpus" | wc -l) inputs; exit status $status"
exit "$status"
