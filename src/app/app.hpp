// What every part of the heom program shares: the execution space it runs on (and heom::Devices, the
// devices of this process it asks for).
#ifndef HEOM_APP_APP_HPP
#define HEOM_APP_APP_HPP

#include <Kokkos_Core.hpp>

#include <vector>

#include "heom/distributed/devices.hpp"
#include "heom/solver/solver.hpp"
#include "io/input.hpp"

namespace heom::app {

using Exec = Kokkos::DefaultExecutionSpace;

}  // namespace heom::app

#endif
