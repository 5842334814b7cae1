// Names of the generator options.
#include "heom/generator/options.hpp"

#include "heom/core/error.hpp"

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

GeneratorKernel parse_generator_kernel(const std::string& name, const std::string& key) {
  for (GeneratorKernel k :
       {GeneratorKernel::automatic, GeneratorKernel::portable, GeneratorKernel::host_block, GeneratorKernel::hermitian,
        GeneratorKernel::two_level, GeneratorKernel::portable_hermitian})
    if (name == to_string(k)) return k;
  throw Error(key + ": \"" + name +
              "\" is not automatic, portable, host-block, hermitian, two-level or portable-hermitian");
}

const char* to_string(AdoShape shape) { return shape == AdoShape::ground_column ? "ground-column" : "square"; }

const char* to_string(Parity parity) { return parity == Parity::odd ? "odd" : "even"; }

}  // namespace heom
