// The heom program's input file (TOML): parsing, validation and conversion to solver units.
#ifndef HEOM_IO_INPUT_HPP
#define HEOM_IO_INPUT_HPP

#include <string>
#include <vector>

#include "heom/core/error.hpp"
#include "heom/core/matrix.hpp"
#include "heom/integrator/options.hpp"
#include "heom/model/model.hpp"
#include "io/units.hpp"

namespace heom::io {

/// Bad input: the message is "FILE:LINE: key: problem" (LINE where the parser knows it).
class InputError : public Error {
 public:
  using Error::Error;
};

/// A validated run, in solver units (see UnitScale; times keep the input's unit).
struct RunConfig {
  std::string input_text;  ///< the file, verbatim (stored in the output)
  std::string input_name;  ///< its path, for messages
  Units units = Units::natural;
  Model model;
  Matrix rho0;
  int depth = 0;
  double t_end = 0.0;
  double output_every = 0.0;
  IntegratorOptions integrator;
  std::string output_file;  ///< [output] file; empty when the input names none
  bool write_ados = false;  ///< [output] ados: store the final ADOs and their labels

  /// 0, dt, 2 dt, ..., and t_end (also when t_end is not a multiple of dt).
  std::vector<double> output_times() const;
};

/// Parses and validates `text` (named `name` in messages). Throws InputError naming the key on
/// anything wrong: syntax, unknown keys or kinds, missing keys, wrong types, shapes, non-Hermitian
/// H or rho, a rho that is not a density matrix, and out-of-range parameters.
RunConfig parse_run_config(const std::string& text, const std::string& name);

/// Reads a file and parses it; a file that cannot be read is an InputError too.
RunConfig read_run_config(const std::string& path);

}  // namespace heom::io

#endif
