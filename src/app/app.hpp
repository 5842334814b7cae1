// What every part of the heom program shares: the execution space it runs on.
#ifndef HEOM_APP_APP_HPP
#define HEOM_APP_APP_HPP

#include <Kokkos_Core.hpp>

namespace heom::app {

using Exec = Kokkos::DefaultExecutionSpace;

}  // namespace heom::app

#endif
