// heom::Matrix: a small dense complex matrix on the host, for Hamiltonians, coupling operators and
// density matrices as users write them. Device code never sees it.
#ifndef HEOM_CORE_MATRIX_HPP
#define HEOM_CORE_MATRIX_HPP

#include <complex>
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace heom {

using complex = std::complex<double>;

/// Dense row-major complex matrix of small size (the system dimension).
class Matrix {
 public:
  Matrix() = default;
  Matrix(int rows, int cols);
  /// Row-by-row literal: Matrix{{1, 0}, {0, -1}}. All rows must have the same length.
  Matrix(std::initializer_list<std::initializer_list<complex>> rows);
  /// From real and imaginary parts of the same shape.
  static Matrix from_parts(const Matrix& real, const Matrix& imag);
  static Matrix identity(int n);
  static Matrix zeros(int rows, int cols) { return Matrix(rows, cols); }

  int rows() const { return m_rows; }
  int cols() const { return m_cols; }
  bool is_square() const { return m_rows == m_cols; }
  complex& operator()(int i, int j) { return m_data[static_cast<std::size_t>(i) * m_cols + j]; }
  const complex& operator()(int i, int j) const { return m_data[static_cast<std::size_t>(i) * m_cols + j]; }
  const complex* data() const { return m_data.data(); }
  complex* data() { return m_data.data(); }

  Matrix adjoint() const;
  Matrix transpose() const;
  /// The rows x cols block whose first element is (row, col).
  Matrix block(int row, int col, int rows, int cols) const;
  complex trace() const;
  /// Largest |a_ij|.
  double max_abs() const;
  /// Hermitian to `tol` relative to max_abs() (absolute when the matrix is zero).
  bool is_hermitian(double tol = 1e-12) const { return is_square() && !first_non_hermitian(tol); }
  /// The first (i, j), i <= j, where a_ij and conj(a_ji) differ by more than is_hermitian allows.
  std::optional<std::pair<int, int>> first_non_hermitian(double tol = 1e-12) const;
  /// The first (i, j) holding a NaN or Inf.
  std::optional<std::pair<int, int>> first_non_finite() const;
  /// All off-diagonal elements exactly zero.
  bool is_diagonal() const;
  /// "2x3": for error messages.
  std::string shape_string() const;

  Matrix& operator+=(const Matrix& other);
  Matrix& operator-=(const Matrix& other);
  Matrix& operator*=(complex s);

 private:
  int m_rows = 0;
  int m_cols = 0;
  std::vector<complex> m_data;
};

Matrix operator+(Matrix a, const Matrix& b);
Matrix operator-(Matrix a, const Matrix& b);
Matrix operator*(const Matrix& a, const Matrix& b);
Matrix operator*(complex s, Matrix a);
/// Largest |a_ij - b_ij|; the shapes must agree.
double max_abs_diff(const Matrix& a, const Matrix& b);

/// A = V diag(values) V^-1 for a diagonalizable square matrix (LAPACK zgeev, then V inverted by
/// zgesv). Throws heom::Error when LAPACK fails or V is singular to working precision.
struct Eigensystem {
  std::vector<complex> values;
  Matrix vectors, inverse;  // V, V^-1
  /// ||V||_1 ||V^-1||_1: how far A is from normal (1 for a normal A), and how much rounding a
  /// change of basis costs.
  double condition = 1.0;
};
Eigensystem eigensystem(const Matrix& a);
/// The eigenvalues of a square matrix, in LAPACK zgeev's order (no eigenvectors: defective matrices
/// too). Throws heom::Error when LAPACK fails.
std::vector<complex> eigenvalues(const Matrix& a);

/// The eigenvalues of a Hermitian matrix, ascending (LAPACK zheev; `a` is taken to be Hermitian, not
/// checked). Throws heom::Error when `a` is not square or LAPACK fails.
std::vector<double> hermitian_eigenvalues(const Matrix& a);

/// Pauli matrices and friends, for building models in code.
namespace operators {
Matrix sigma_x();
Matrix sigma_y();
Matrix sigma_z();
/// |i><j| in dimension n.
Matrix projector(int n, int i, int j);
}  // namespace operators

}  // namespace heom

#endif
