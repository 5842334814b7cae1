// heom::Matrix arithmetic and checks.
#include "heom/core/matrix.hpp"

#include <algorithm>
#include <cmath>

#include "heom/core/error.hpp"

extern "C" {
// LAPACK: eigenvalues and right eigenvectors of a general complex matrix; a general linear solve.
void zgeev_(const char* jobvl, const char* jobvr, const int* n, std::complex<double>* a, const int* lda,
            std::complex<double>* w, std::complex<double>* vl, const int* ldvl, std::complex<double>* vr,
            const int* ldvr, std::complex<double>* work, const int* lwork, double* rwork, int* info);
void zgesv_(const int* n, const int* nrhs, std::complex<double>* a, const int* lda, int* ipiv, std::complex<double>* b,
            const int* ldb, int* info);
// LAPACK: eigenvalues of a complex Hermitian matrix.
void zheev_(const char* jobz, const char* uplo, const int* n, std::complex<double>* a, const int* lda, double* w,
            std::complex<double>* work, const int* lwork, double* rwork, int* info);
}

namespace heom {

Matrix::Matrix(int rows, int cols) : m_rows(rows), m_cols(cols) {
  if (rows < 0 || cols < 0) throw Error("Matrix: negative shape " + std::to_string(rows) + "x" + std::to_string(cols));
  m_data.assign(static_cast<std::size_t>(rows) * cols, complex(0.0, 0.0));
}

Matrix::Matrix(std::initializer_list<std::initializer_list<complex>> rows) {
  m_rows = static_cast<int>(rows.size());
  m_cols = m_rows == 0 ? 0 : static_cast<int>(rows.begin()->size());
  m_data.reserve(static_cast<std::size_t>(m_rows) * m_cols);
  for (const auto& row : rows) {
    if (static_cast<int>(row.size()) != m_cols) throw Error("Matrix: rows of different lengths in initializer");
    m_data.insert(m_data.end(), row.begin(), row.end());
  }
}

Matrix Matrix::from_parts(const Matrix& real, const Matrix& imag) {
  if (real.rows() != imag.rows() || real.cols() != imag.cols())
    throw Error("Matrix: real part is " + real.shape_string() + " but imaginary part is " + imag.shape_string());
  Matrix m(real.rows(), real.cols());
  for (std::size_t i = 0; i < m.m_data.size(); ++i) m.m_data[i] = complex(real.m_data[i].real(), imag.m_data[i].real());
  return m;
}

Matrix Matrix::identity(int n) {
  Matrix m(n, n);
  for (int i = 0; i < n; ++i) m(i, i) = 1.0;
  return m;
}

Matrix Matrix::adjoint() const {
  Matrix m(m_cols, m_rows);
  for (int i = 0; i < m_rows; ++i)
    for (int j = 0; j < m_cols; ++j) m(j, i) = std::conj((*this)(i, j));
  return m;
}

Matrix Matrix::transpose() const {
  Matrix m(m_cols, m_rows);
  for (int i = 0; i < m_rows; ++i)
    for (int j = 0; j < m_cols; ++j) m(j, i) = (*this)(i, j);
  return m;
}

Matrix Matrix::block(int row, int col, int rows, int cols) const {
  if (row < 0 || col < 0 || rows < 0 || cols < 0 || row + rows > m_rows || col + cols > m_cols)
    throw Error("matrix block " + std::to_string(rows) + "x" + std::to_string(cols) + " at (" + std::to_string(row) +
                ", " + std::to_string(col) + ") lies outside a " + shape_string() + " matrix");
  Matrix m(rows, cols);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) m(i, j) = (*this)(row + i, col + j);
  return m;
}

complex Matrix::trace() const {
  complex t = 0.0;
  for (int i = 0; i < std::min(m_rows, m_cols); ++i) t += (*this)(i, i);
  return t;
}

double Matrix::max_abs() const {
  double m = 0.0;
  for (const auto& z : m_data) m = std::max(m, std::abs(z));
  return m;
}

std::optional<std::pair<int, int>> Matrix::first_non_hermitian(double tol) const {
  const double scale = std::max(max_abs(), 1e-300);
  for (int i = 0; i < std::min(m_rows, m_cols); ++i)
    for (int j = i; j < std::min(m_rows, m_cols); ++j)
      if (std::abs((*this)(i, j) - std::conj((*this)(j, i))) > tol * scale) return std::make_pair(i, j);
  return std::nullopt;
}

std::optional<std::pair<int, int>> Matrix::first_non_finite() const {
  for (int i = 0; i < m_rows; ++i)
    for (int j = 0; j < m_cols; ++j)
      if (!std::isfinite((*this)(i, j).real()) || !std::isfinite((*this)(i, j).imag())) return std::make_pair(i, j);
  return std::nullopt;
}

bool Matrix::is_diagonal() const {
  for (int i = 0; i < m_rows; ++i)
    for (int j = 0; j < m_cols; ++j)
      if (i != j && (*this)(i, j) != complex(0.0, 0.0)) return false;
  return true;
}

std::string Matrix::shape_string() const { return std::to_string(m_rows) + "x" + std::to_string(m_cols); }

static void require_same_shape(const Matrix& a, const Matrix& b, const char* what) {
  if (a.rows() != b.rows() || a.cols() != b.cols())
    throw Error(std::string("Matrix ") + what + ": shapes " + a.shape_string() + " and " + b.shape_string() +
                " differ");
}

Matrix& Matrix::operator+=(const Matrix& other) {
  require_same_shape(*this, other, "+");
  for (std::size_t i = 0; i < m_data.size(); ++i) m_data[i] += other.m_data[i];
  return *this;
}

Matrix& Matrix::operator-=(const Matrix& other) {
  require_same_shape(*this, other, "-");
  for (std::size_t i = 0; i < m_data.size(); ++i) m_data[i] -= other.m_data[i];
  return *this;
}

Matrix& Matrix::operator*=(complex s) {
  for (auto& z : m_data) z *= s;
  return *this;
}

Matrix operator+(Matrix a, const Matrix& b) { return a += b; }
Matrix operator-(Matrix a, const Matrix& b) { return a -= b; }
Matrix operator*(complex s, Matrix a) { return a *= s; }

Matrix operator*(const Matrix& a, const Matrix& b) {
  if (a.cols() != b.rows())
    throw Error("Matrix *: shapes " + a.shape_string() + " and " + b.shape_string() + " do not chain");
  Matrix c(a.rows(), b.cols());
  for (int i = 0; i < a.rows(); ++i)
    for (int l = 0; l < a.cols(); ++l) {
      const complex ail = a(i, l);
      for (int j = 0; j < b.cols(); ++j) c(i, j) += ail * b(l, j);
    }
  return c;
}

double max_abs_diff(const Matrix& a, const Matrix& b) {
  require_same_shape(a, b, "difference");
  double m = 0.0;
  for (int i = 0; i < a.rows(); ++i)
    for (int j = 0; j < a.cols(); ++j) m = std::max(m, std::abs(a(i, j) - b(i, j)));
  return m;
}

namespace operators {
Matrix sigma_x() { return Matrix{{0.0, 1.0}, {1.0, 0.0}}; }
Matrix sigma_y() { return Matrix{{0.0, complex(0.0, -1.0)}, {complex(0.0, 1.0), 0.0}}; }
Matrix sigma_z() { return Matrix{{1.0, 0.0}, {0.0, -1.0}}; }
Matrix projector(int n, int i, int j) {
  if (i < 0 || i >= n || j < 0 || j >= n)
    throw Error("projector: indices out of range for dimension " + std::to_string(n));
  Matrix m(n, n);
  m(i, j) = 1.0;
  return m;
}
}  // namespace operators

}  // namespace heom

namespace heom {

namespace {
double norm_1(const Matrix& a) {
  double largest = 0.0;
  for (int j = 0; j < a.cols(); ++j) {
    double column = 0.0;
    for (int i = 0; i < a.rows(); ++i) column += std::abs(a(i, j));
    largest = std::max(largest, column);
  }
  return largest;
}
}  // namespace

Eigensystem eigensystem(const Matrix& a) {
  if (!a.is_square()) throw Error("eigensystem: the matrix is " + a.shape_string() + ", not square");
  const int n = a.rows();
  Eigensystem e;
  e.values.assign(n, 0.0);
  e.vectors = Matrix(n, n);
  e.inverse = Matrix::identity(n);
  if (n == 0) return e;
  // LAPACK is column-major: hand it A^T's storage (= A column-major) and read V column-major back.
  std::vector<complex> work_a(static_cast<std::size_t>(n) * n), vr(static_cast<std::size_t>(n) * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) work_a[static_cast<std::size_t>(j) * n + i] = a(i, j);
  const char no = 'N', yes = 'V';
  const int one = 1, lwork = 4 * n;
  std::vector<complex> work(lwork);
  std::vector<double> rwork(2 * n);
  complex vl_unused;
  int info = 0;
  zgeev_(&no, &yes, &n, work_a.data(), &n, e.values.data(), &vl_unused, &one, vr.data(), &n, work.data(), &lwork,
         rwork.data(), &info);
  if (info != 0) throw Error("eigensystem: LAPACK zgeev failed with info = " + std::to_string(info));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) e.vectors(i, j) = vr[static_cast<std::size_t>(j) * n + i];
  // V^-1 = solve(V, I), column-major again.
  std::vector<complex> v = vr, identity(static_cast<std::size_t>(n) * n, 0.0);
  for (int i = 0; i < n; ++i) identity[static_cast<std::size_t>(i) * n + i] = 1.0;
  std::vector<int> pivots(n);
  zgesv_(&n, &n, v.data(), &n, pivots.data(), identity.data(), &n, &info);
  if (info != 0) throw Error("eigensystem: the eigenvectors are linearly dependent (the matrix is defective)");
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) e.inverse(i, j) = identity[static_cast<std::size_t>(j) * n + i];
  e.condition = norm_1(e.vectors) * norm_1(e.inverse);
  return e;
}

std::vector<complex> eigenvalues(const Matrix& a) {
  if (!a.is_square()) throw Error("eigenvalues: the matrix is " + a.shape_string() + ", not square");
  const int n = a.rows();
  std::vector<complex> values(static_cast<std::size_t>(n));
  if (n == 0) return values;
  // (Column-major: A^T's storage. The values alone: no eigenvectors, so a defective matrix is fine.)
  std::vector<complex> work_a(static_cast<std::size_t>(n) * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) work_a[static_cast<std::size_t>(j) * n + i] = a(i, j);
  const char no = 'N';
  const int one = 1, lwork = 4 * n;
  std::vector<complex> work(lwork);
  std::vector<double> rwork(2 * n);
  complex unused;
  int info = 0;
  zgeev_(&no, &no, &n, work_a.data(), &n, values.data(), &unused, &one, &unused, &one, work.data(), &lwork,
         rwork.data(), &info);
  if (info != 0) throw Error("eigenvalues: LAPACK zgeev failed with info = " + std::to_string(info));
  return values;
}

std::vector<double> hermitian_eigenvalues(const Matrix& a) {
  if (!a.is_square()) throw Error("hermitian_eigenvalues: the matrix is " + a.shape_string() + ", not square");
  Matrix m = a;  // zheev overwrites it
  const int n = m.rows();
  std::vector<double> w(n);
  int lwork = std::max(1, 2 * n - 1), info = 0;
  std::vector<std::complex<double>> work(lwork);
  std::vector<double> rwork(std::max(1, 3 * n - 2));
  // LAPACK is column-major: the row-major data is the transpose, which has the same eigenvalues.
  zheev_("N", "U", &n, m.data(), &n, w.data(), work.data(), &lwork, rwork.data(), &info);
  if (info != 0) throw Error("LAPACK zheev failed with info = " + std::to_string(info));
  return w;
}

}  // namespace heom
