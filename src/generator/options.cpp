// Names of the generator options.
#include "heom/generator/options.hpp"

namespace heom {

const char* to_string(GeneratorKernel kernel) {
  switch (kernel) {
    case GeneratorKernel::automatic:
      return "automatic";
    case GeneratorKernel::portable:
      return "portable";
    case GeneratorKernel::host_block:
      return "host-block";
    case GeneratorKernel::hermitian:
      return "hermitian";
    case GeneratorKernel::two_level:
      return "two-level";
    case GeneratorKernel::ground_column:
      return "ground-column";
    case GeneratorKernel::portable_hermitian:
      return "portable-hermitian";
  }
  return "unknown";
}

const char* to_string(AdoShape shape) { return shape == AdoShape::ground_column ? "ground-column" : "square"; }

const char* to_string(Parity parity) { return parity == Parity::odd ? "odd" : "even"; }

}  // namespace heom
