// Exponents fitted to C(t) by ESPRIT or Prony on uniform samples, poles shared by C_R and C_I.
#include "heom/model/correlation_fit.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>
#include <string>

#include "heom/core/error.hpp"
#include "heom/model/correlation.hpp"

extern "C" {
// LAPACK: SVD (divide and conquer), minimum-norm least squares, eigenvalues of a real matrix.
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s, double* u,
             const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork, int* iwork, int* info);
void dgelsd_(const int* m, const int* n, const int* nrhs, double* a, const int* lda, double* b, const int* ldb,
             double* s, const double* rcond, int* rank, double* work, const int* lwork, int* iwork, int* info);
void dgeev_(const char* jobvl, const char* jobvr, const int* n, double* a, const int* lda, double* wr, double* wi,
            double* vl, const int* ldvl, double* vr, const int* ldvr, double* work, const int* lwork, int* info);
}

namespace heom {
namespace {

constexpr double pi = 3.14159265358979323846;
// Samples twice as dense as J's cutoff needs: at the bare Nyquist rate ESPRIT stalls at 1e-3 (an
// Ohmic bath over 100 / wc), at twice that it meets 1e-6.
constexpr double oversampling = 2.0;
// The most of J's reorganisation energy a fit may leave out past the samples' reach (a Drude-Lorentz
// J, falling as 1/w, always leaves some).
constexpr double max_left_out = 0.01;

/// Column-major m x n.
struct Dense {
  int rows = 0, cols = 0;
  std::vector<double> a;
  Dense(int m, int n) : rows(m), cols(n), a(static_cast<std::size_t>(m) * n, 0.0) {}
  double& operator()(int i, int j) { return a[static_cast<std::size_t>(j) * rows + i]; }
  double operator()(int i, int j) const { return a[static_cast<std::size_t>(j) * rows + i]; }
};

/// The minimum-norm least-squares solution X (a.cols x b.cols) of A X = B.
Dense least_squares(Dense a, const Dense& b) {
  const int m = a.rows, n = a.cols, nrhs = b.cols, ldb = std::max(m, n);
  std::vector<double> rhs(static_cast<std::size_t>(ldb) * nrhs, 0.0), s(std::min(m, n));
  for (int j = 0; j < nrhs; ++j)
    for (int i = 0; i < m; ++i) rhs[static_cast<std::size_t>(j) * ldb + i] = b(i, j);
  const double rcond = 1e-14;
  int rank = 0, info = 0, lwork = -1, iwork_query = 0;
  double work_query = 0.0;
  dgelsd_(&m, &n, &nrhs, a.a.data(), &m, rhs.data(), &ldb, s.data(), &rcond, &rank, &work_query, &lwork, &iwork_query,
          &info);
  lwork = static_cast<int>(work_query) + 1;
  std::vector<double> work(lwork);
  std::vector<int> iwork(std::max(1, iwork_query));
  dgelsd_(&m, &n, &nrhs, a.a.data(), &m, rhs.data(), &ldb, s.data(), &rcond, &rank, work.data(), &lwork, iwork.data(),
          &info);
  if (info != 0) throw Error("spectral-density fit: LAPACK dgelsd failed with info = " + std::to_string(info));
  Dense x(n, nrhs);
  for (int j = 0; j < nrhs; ++j)
    for (int i = 0; i < n; ++i) x(i, j) = rhs[static_cast<std::size_t>(j) * ldb + i];
  return x;
}

std::vector<complex> eigenvalues(Dense a) {
  const int n = a.rows, one = 1;
  std::vector<double> wr(n), wi(n);
  int info = 0, lwork = std::max(1, 8 * n);
  std::vector<double> work(lwork);
  double dummy = 0.0;
  dgeev_("N", "N", &n, a.a.data(), &n, wr.data(), wi.data(), &dummy, &one, &dummy, &one, work.data(), &lwork, &info);
  if (info != 0) throw Error("spectral-density fit: LAPACK dgeev failed with info = " + std::to_string(info));
  std::vector<complex> z(n);
  for (int i = 0; i < n; ++i) z[i] = complex(wr[i], wi[i]);
  return z;
}

/// The left singular vectors of the samples' joint Hankel matrix [H(C_R) H(C_I)] (ESPRIT's signal
/// subspace is their first r columns).
Dense hankel_subspace(const std::vector<double>& re, const std::vector<double>& im) {
  const int n = static_cast<int>(re.size()), l = n / 2, m = n - l + 1, cols = 2 * m;
  Dense h(l, cols);
  for (int j = 0; j < m; ++j)
    for (int i = 0; i < l; ++i) {
      h(i, j) = re[i + j];
      h(i, j + m) = im[i + j];
    }
  const int k = std::min(l, cols);
  std::vector<double> s(k), vt_full(static_cast<std::size_t>(k) * cols);
  Dense u(l, k);
  int info = 0, lwork = -1, ldvt = k;
  std::vector<int> iwork(8 * static_cast<std::size_t>(k));
  double work_query = 0.0;
  dgesdd_("S", &l, &cols, h.a.data(), &l, s.data(), u.a.data(), &l, vt_full.data(), &ldvt, &work_query, &lwork,
          iwork.data(), &info);
  lwork = static_cast<int>(work_query) + 1;
  std::vector<double> work(lwork);
  dgesdd_("S", &l, &cols, h.a.data(), &l, s.data(), u.a.data(), &l, vt_full.data(), &ldvt, work.data(), &lwork,
          iwork.data(), &info);
  if (info != 0) throw Error("spectral-density fit: LAPACK dgesdd failed with info = " + std::to_string(info));
  return u;
}

std::vector<complex> esprit_poles(const Dense& u, int r) {
  const int l = u.rows;
  Dense top(l - 1, r), bottom(l - 1, r);
  for (int j = 0; j < r; ++j)
    for (int i = 0; i + 1 < l; ++i) {
      top(i, j) = u(i, j);
      bottom(i, j) = u(i + 1, j);
    }
  return eigenvalues(least_squares(std::move(top), bottom));
}

std::vector<complex> prony_poles(const std::vector<double>& re, const std::vector<double>& im, int r) {
  const int n = static_cast<int>(re.size()), rows = n - r;
  Dense a(2 * rows, r), b(2 * rows, 1);
  for (int k = 0; k < rows; ++k)
    for (int c = 0; c < 2; ++c) {
      const std::vector<double>& x = c == 0 ? re : im;
      for (int i = 0; i < r; ++i) a(c * rows + k, i) = x[k + i];
      b(c * rows + k, 0) = -x[k + r];
    }
  const Dense p = least_squares(std::move(a), b);
  Dense companion(r, r);  // of z^r + p_{r-1} z^{r-1} + ... + p_0
  for (int i = 0; i < r; ++i) companion(0, i) = -p(r - 1 - i, 0);
  for (int i = 1; i < r; ++i) companion(i, i - 1) = 1.0;
  return eigenvalues(companion);
}

struct Candidate {
  std::vector<Exponent> exponents;
  double error = 0.0;
};

/// Amplitudes of the decaying poles (z^k, real or one of a conjugate pair) for both parts, by least
/// squares on the samples, as exponents; and their error on the fine grid (samples and midpoints).
Candidate amplitudes(const std::vector<complex>& poles, const std::vector<complex>& fine, double dt, double scale) {
  // Spurious poles: growing, or on the negative real axis (a Nyquist oscillation without a partner).
  std::vector<complex> kept;
  for (const complex& z : poles)
    if (std::abs(z) < 1.0 && z.imag() >= 0.0 && !(z.imag() == 0.0 && z.real() <= 0.0)) kept.push_back(z);
  std::sort(kept.begin(), kept.end(), [](const complex& a, const complex& b) {
    return std::abs(a) != std::abs(b) ? std::abs(a) > std::abs(b) : a.imag() < b.imag();
  });
  const int samples = static_cast<int>(fine.size() + 1) / 2;
  int columns = 0;
  for (const complex& z : kept) columns += z.imag() > 0.0 ? 2 : 1;
  Candidate out;
  if (columns == 0 || columns >= samples) {
    out.error = 1.0;
    return out;
  }
  Dense design(samples, columns), rhs(samples, 2);
  for (int k = 0; k < samples; ++k) {
    rhs(k, 0) = fine[2 * k].real();
    rhs(k, 1) = fine[2 * k].imag();
  }
  int col = 0;
  for (const complex& z : kept) {
    complex power = 1.0;
    for (int k = 0; k < samples; ++k, power *= z) {
      design(k, col) = power.real();
      if (z.imag() > 0.0) design(k, col + 1) = power.imag();
    }
    col += z.imag() > 0.0 ? 2 : 1;
  }
  const Dense x = least_squares(design, rhs);
  CorrelationExpansion e;
  col = 0;
  for (const complex& z : kept) {
    const complex v = -std::log(z) / dt;
    if (z.imag() > 0.0) {
      // p Re z^k + q Im z^k = (p - iq)/2 z^k + (p + iq)/2 conj(z)^k
      for (int c = 0; c < 2; ++c) {
        const complex half(0.5 * x(col, c), -0.5 * x(col + 1, c));
        (c == 0 ? e.ck_real : e.ck_imag).insert((c == 0 ? e.ck_real : e.ck_imag).end(), {half, std::conj(half)});
        (c == 0 ? e.vk_real : e.vk_imag).insert((c == 0 ? e.vk_real : e.vk_imag).end(), {v, std::conj(v)});
      }
      col += 2;
    } else {
      e.ck_real.push_back(x(col, 0));
      e.vk_real.push_back(v.real());
      e.ck_imag.push_back(x(col, 1));
      e.vk_imag.push_back(v.real());
      col += 1;
    }
  }
  out.exponents = e.exponents(true);
  for (std::size_t i = 0; i < fine.size(); ++i)
    out.error = std::max(out.error, std::abs(evaluate_correlation(out.exponents, 0.5 * dt * i) - fine[i]) / scale);
  if (!std::isfinite(out.error)) out.error = 1.0;
  return out;
}

}  // namespace

const char* to_string(FitMethod method) { return method == FitMethod::esprit ? "esprit" : "prony"; }

std::optional<OptionProblem> FitOptions::validate() const {
  if (!(tolerance >= 1e-12 && tolerance < 1.0))
    return OptionProblem{"tolerance",
                         "must be between 1e-12 and 1 (a fraction of max |C(t)|), got " + format_number(tolerance)};
  if (!(time > 0.0 && std::isfinite(time)))
    return OptionProblem{"time", "must be finite and > 0 (the window [0, time]), got " + format_number(time)};
  if (max_exponents < 1 || max_exponents > 200)
    return OptionProblem{"max_exponents", "must be between 1 and 200, got " + std::to_string(max_exponents)};
  if (samples < 64 || samples > 20000)
    return OptionProblem{"samples", "must be between 64 and 20000, got " + std::to_string(samples)};
  return std::nullopt;
}

std::string CorrelationFit::summary() const {
  std::string out = std::string(to_string(options.method)) + " fit: error " + format_number(error, 3) +
                    " of max |C| over t <= " + format_number(options.time, 6) + " (tolerance " +
                    format_number(options.tolerance, 3) + "), J up to w = " + format_number(max_frequency, 4);
  if (reorganisation_left_out > 1e-12) out += " (" + format_number(reorganisation_left_out, 3) + " of lambda left out)";
  return out;
}

complex evaluate_correlation(const std::vector<Exponent>& exponents, double t) {
  complex sum = 0.0;
  const complex i(0.0, 1.0);
  for (const Exponent& e : exponents) {
    const complex decay = std::exp(-e.v * t);
    switch (e.kind) {
      case ExponentKind::R:
        sum += e.c * decay;
        break;
      case ExponentKind::I:
        sum += i * e.c * decay;
        break;
      case ExponentKind::RI:
        sum += (e.c + i * e.c2) * decay;
        break;
      case ExponentKind::plus:
      case ExponentKind::minus:
        throw Error("evaluate_correlation: exponent of fermionic kind " + std::string(to_string(e.kind)) +
                    " in a bosonic C(t)");
    }
  }
  return sum;
}

CorrelationFit fit_correlation(const SpectralDensity& j, double temperature, const FitOptions& options) {
  require_valid(options.validate(), "spectral-density fit");
  if (!(temperature >= 0.0 && std::isfinite(temperature)))
    throw Error("spectral-density fit: the temperature must be finite and >= 0, got " + format_number(temperature, 3));
  const auto start = std::chrono::steady_clock::now();
  CorrelationFit fit;
  fit.options = options;
  // Samples dense enough to carry J up to where 1% of the tolerance of its reorganisation energy lies
  // beyond; where the window is too long for that, J is cut at half the samples' Nyquist frequency.
  const double wanted = j.frequency_cutoff(0.01 * options.tolerance);
  const double needed = std::ceil(oversampling * options.time * wanted / pi) + 1.0;
  fit.samples = static_cast<int>(std::min(std::max(needed, 256.0), static_cast<double>(options.samples)));
  const double dt = options.time / (fit.samples - 1);
  fit.max_frequency = std::min(wanted, pi / (oversampling * dt));
  const double lambda = j.reorganisation_energy(wanted);
  fit.reorganisation_left_out = lambda > 0.0 ? 1.0 - j.reorganisation_energy(fit.max_frequency) / lambda : 0.0;
  if (fit.reorganisation_left_out > max_left_out)
    throw Error("spectral-density fit: J is cut at w = " + format_number(fit.max_frequency, 4) + " by " +
                std::to_string(fit.samples) + " samples over the time window t <= " + format_number(options.time, 6) +
                ", leaving out " + format_number(fit.reorganisation_left_out, 3) +
                " of its reorganisation energy; shorten the time window");
  const std::vector<complex> fine = j.correlation(0.5 * dt, 2 * fit.samples - 1, temperature, fit.max_frequency);
  for (const complex& c : fine) fit.max_abs = std::max(fit.max_abs, std::abs(c));
  if (fit.max_abs == 0.0) return fit;  // J = 0: no exponents
  std::vector<double> re(fit.samples), im(fit.samples);
  for (int k = 0; k < fit.samples; ++k) {
    re[k] = fine[2 * k].real();
    im[k] = fine[2 * k].imag();
  }

  Dense subspace(0, 0);
  if (options.method == FitMethod::esprit) subspace = hankel_subspace(re, im);
  const int most =
      std::min(options.max_exponents, options.method == FitMethod::esprit ? subspace.cols : fit.samples / 4);
  Candidate best;
  best.error = INFINITY;
  for (int r = 1; r <= most; ++r) {
    const std::vector<complex> poles =
        options.method == FitMethod::esprit ? esprit_poles(subspace, r) : prony_poles(re, im, r);
    Candidate c = amplitudes(poles, fine, dt, fit.max_abs);
    if (c.error < best.error) best = std::move(c);
    if (best.error <= options.tolerance) break;
  }
  fit.exponents = std::move(best.exponents);
  fit.error = best.error;
  fit.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!(fit.error <= options.tolerance))
    throw Error("spectral-density fit: the best " + std::string(to_string(options.method)) + " fit with at most " +
                std::to_string(options.max_exponents) + " exponents reaches an error of " +
                format_number(fit.error, 3) + " of max |C(t)| over t <= " + format_number(options.time, 6) + " (" +
                std::to_string(fit.exponents.size()) + " exponents), above the tolerance " +
                format_number(options.tolerance, 3) +
                "; allow more exponents, loosen the tolerance or change the time window");
  return fit;
}

}  // namespace heom
