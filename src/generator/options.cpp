// Names of the generator options.
#include "heom/generator/options.hpp"

#include <optional>
#include <string>

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

std::optional<GeneratorKernel> kernel_named(const std::string& name) {
  for (GeneratorKernel k :
       {GeneratorKernel::automatic, GeneratorKernel::portable, GeneratorKernel::host_block, GeneratorKernel::hermitian,
        GeneratorKernel::two_level, GeneratorKernel::portable_hermitian})
    if (name == to_string(k)) return k;
  return std::nullopt;
}

const char* kernel_names() {
  return "\"automatic\", \"portable\", \"host-block\", \"hermitian\", \"two-level\" or \"portable-hermitian\"";
}

const char* to_string(AdoShape shape) { return shape == AdoShape::ground_column ? "ground-column" : "square"; }

const char* to_string(Parity parity) { return parity == Parity::odd ? "odd" : "even"; }

std::optional<OptionProblem> GeneratorOptions::validate() const {
  const bool columns = shape == AdoShape::ground_column;
  if (kernel != GeneratorKernel::automatic && (kernel == GeneratorKernel::ground_column) != columns)
    return OptionProblem{"kernel",
                         std::string("\"") + to_string(kernel) + "\" computes " +
                             (columns ? "square blocks, not ground columns" : "ground columns, not square blocks") +
                             " (GeneratorOptions::shape)"};
  if (team_size < 0 || ados_per_team < 0)
    return OptionProblem{team_size < 0 ? "team_size" : "ados_per_team", "must be >= 0 (0: the backend's choice)"};
  const bool portable = kernel == GeneratorKernel::portable || kernel == GeneratorKernel::portable_hermitian ||
                        kernel == GeneratorKernel::automatic;
  if ((team_size > 0 || ados_per_team > 0) && (columns || !portable))
    return OptionProblem{team_size > 0 ? "team_size" : "ados_per_team",
                         std::string("shapes the portable kernel, not the ") +
                             to_string(columns ? GeneratorKernel::ground_column : kernel) + " kernel"};
  if (parity == Parity::odd && columns) return OptionProblem{"parity", "odd needs square blocks, not ground columns"};
  return std::nullopt;
}

}  // namespace heom
