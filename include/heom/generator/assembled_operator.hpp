// heom::AssembledOperator: the same HEOM generator as heom::Generator, assembled as a sparse CRS
// matrix (Kokkos Kernels) from Kronecker-product superoperators: a second opinion for tests (steady
// states and spectra solve with the matrix-free generator).
#ifndef HEOM_GENERATOR_ASSEMBLED_OPERATOR_HPP
#define HEOM_GENERATOR_ASSEMBLED_OPERATOR_HPP

#include <Kokkos_Core.hpp>
#include <KokkosSparse_CrsMatrix.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "heom/core/backend_traits.hpp"
#include "heom/core/backends.hpp"
#include "heom/core/error.hpp"
#include "heom/core/kokkos_compat.hpp"
#include "heom/core/kokkos_sparse_compat.hpp"
#include "heom/core/to_device.hpp"
#include "heom/generator/options.hpp"
#include "heom/hierarchy/hierarchy.hpp"
#include "heom/model/model.hpp"

namespace heom {

namespace impl {

/// The generator as host CSR arrays; row a n^2 + i n + j is element (i, j) of ADO a (the layout of
/// heom::Generator's vectors). Duplicates are summed and exact zeros dropped.
struct HostCsr {
  std::int64_t num_rows = 0;
  std::vector<std::int64_t> row_map;  // num_rows + 1
  std::vector<std::int64_t> columns;
  std::vector<complex> values;
};

HostCsr assemble_generator(const Model& model, const Hierarchy& hierarchy, Parity parity = Parity::even);

}  // namespace impl

template <class ExecSpace>
class AssembledOperator {
 public:
  using traits = BackendTraits<ExecSpace>;
  using matrix_type = KokkosSparse::CrsMatrix<device_complex, int, typename traits::device_type, void, int>;
  using vector_type = typename traits::template view<device_complex*>;
  using const_vector_type = typename traits::template view<const device_complex*>;

  /// Throws heom::Error when the matrix has more than 2^31 - 1 rows or non-zeros (int indices).
  /// `parity`: of the operator it acts on (GeneratorOptions::parity).
  AssembledOperator(const ExecSpace& exec, const Model& model, const Hierarchy& hierarchy,
                    Parity parity = Parity::even);

  /// out = L(in), by sparse matrix-vector product.
  void apply(const ExecSpace& exec, const const_vector_type& in, const vector_type& out) const;

  const matrix_type& matrix() const { return m_matrix; }
  std::int64_t num_rows() const { return m_matrix.numRows(); }
  std::int64_t num_nonzeros() const { return m_matrix.nnz(); }

 private:
  matrix_type m_matrix;
};

template <class ExecSpace>
AssembledOperator<ExecSpace>::AssembledOperator(const ExecSpace& exec, const Model& model, const Hierarchy& hierarchy,
                                                Parity parity) {
  const impl::ScopedRegion region("heom::AssembledOperator::setup");
  const impl::HostCsr csr = impl::assemble_generator(model, hierarchy, parity);
  const std::int64_t limit = 2147483647;
  if (csr.num_rows > limit || static_cast<std::int64_t>(csr.values.size()) > limit)
    throw Error("AssembledOperator: " + std::to_string(csr.values.size()) +
                " non-zeros exceed the 2^31 - 1 that int indices allow");
  const int rows = static_cast<int>(csr.num_rows);
  const int nnz = static_cast<int>(csr.values.size());
  const auto row_map =
      impl::allocate<typename matrix_type::row_map_type::non_const_type>(exec, "heom::assembled::row_map", rows + 1);
  const auto columns =
      impl::allocate<typename matrix_type::index_type::non_const_type>(exec, "heom::assembled::columns", nnz);
  const auto values =
      impl::allocate<typename matrix_type::values_type::non_const_type>(exec, "heom::assembled::values", nnz);
  auto h_row_map = Kokkos::create_mirror_view(row_map);
  auto h_columns = Kokkos::create_mirror_view(columns);
  auto h_values = Kokkos::create_mirror_view(values);
  for (int r = 0; r <= rows; ++r) h_row_map(r) = static_cast<int>(csr.row_map[r]);
  for (int e = 0; e < nnz; ++e) {
    h_columns(e) = static_cast<int>(csr.columns[e]);
    h_values(e) = device_complex(csr.values[e].real(), csr.values[e].imag());
  }
  Kokkos::deep_copy(exec, row_map, h_row_map);
  Kokkos::deep_copy(exec, columns, h_columns);
  Kokkos::deep_copy(exec, values, h_values);
  exec.fence();
  m_matrix = matrix_type("heom::assembled", rows, rows, nnz, values, row_map, columns);
}

template <class ExecSpace>
void AssembledOperator<ExecSpace>::apply(const ExecSpace& exec, const const_vector_type& in,
                                         const vector_type& out) const {
  if (in.extent(0) != static_cast<std::size_t>(num_rows()) || out.extent(0) != static_cast<std::size_t>(num_rows()))
    throw Error("AssembledOperator::apply: vectors have " + std::to_string(in.extent(0)) + " and " +
                std::to_string(out.extent(0)) + " elements, expected " + std::to_string(num_rows()));
  impl::spmv(exec, device_complex(1.0), m_matrix, in, device_complex(0.0), out);
}

#define HEOM_EXTERN_ASSEMBLED(E) extern template class AssembledOperator<E>;
HEOM_FOR_EACH_BACKEND(HEOM_EXTERN_ASSEMBLED)
#undef HEOM_EXTERN_ASSEMBLED

}  // namespace heom

#endif
