// The fuzz target of the program's input reader: any bytes must either parse into a run or be refused
// with heom::Error (InputError: exit 2 naming the key). Anything else that escapes (a standard
// exception, a crash, a sanitizer report, a hang) is a bug. Built with libFuzzer by run_fuzzer.sh and,
// with any compiler, into heom_fuzz_replay (replay.cpp), which CI runs over the corpus.
#include <cstddef>
#include <cstdint>
#include <string>

#include "heom/core/error.hpp"
#include "io/input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    heom::io::parse_run_config(text, "fuzz.toml");
  } catch (const heom::Error&) {
  }
  return 0;
}
