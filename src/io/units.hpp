// Units of the input file: "natural" (hbar = kB = 1) or "spectroscopy" (cm^-1, fs, K).
#ifndef HEOM_IO_UNITS_HPP
#define HEOM_IO_UNITS_HPP

#include <string>

namespace heom::io {

enum class Units {
  natural,       ///< hbar = kB = 1: energies, rates and temperatures in one unit, times in its inverse
  spectroscopy,  ///< energies, rates, frequencies in cm^-1; times in fs; temperatures in K
};

const char* to_string(Units units);

/// Factors from the input's units to the solver's (natural) ones. In spectroscopy units the solver
/// works in rad/fs and fs: w[rad/fs] = E[cm^-1] 2 pi c with c = 2.99792458e-5 cm/fs, and
/// kB T[cm^-1] = 0.695034800 T[K].
struct UnitScale {
  double energy = 1.0;       ///< multiply an energy, rate or frequency by this
  double temperature = 1.0;  ///< multiply a temperature by this (to an energy in solver units)
  double time = 1.0;         ///< multiply a time by this
  const char* time_unit = "1/energy";
  const char* energy_unit = "energy";  ///< the input's: "cm^-1" or "energy" (natural units)
};

UnitScale unit_scale(Units units);

/// Speed of light in cm/fs and Boltzmann's constant in cm^-1/K (CODATA).
constexpr double speed_of_light_cm_per_fs = 2.99792458e-5;
constexpr double boltzmann_cm_per_kelvin = 0.695034800;

}  // namespace heom::io

#endif
