// Unit conversion factors for input files.
#include "io/units.hpp"

namespace heom::io {

const char* to_string(Units units) { return units == Units::natural ? "natural" : "spectroscopy"; }

UnitScale unit_scale(Units units) {
  UnitScale s;
  if (units == Units::spectroscopy) {
    constexpr double pi = 3.14159265358979323846;
    s.energy = 2.0 * pi * speed_of_light_cm_per_fs;      // cm^-1 -> rad/fs
    s.temperature = boltzmann_cm_per_kelvin * s.energy;  // K -> cm^-1 -> rad/fs
    s.time = 1.0;                                        // fs stay fs
    s.time_unit = "fs";
    s.energy_unit = "cm^-1";
  }
  return s;
}

}  // namespace heom::io
