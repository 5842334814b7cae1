// The heom Python module's core (heom._heom): conversions, Kokkos' lifetime, exceptions, and the
// model: baths and Hamiltonians. The friendly API (QuTiP objects, results, progress) is heom/*.py.
#include <pybind11/complex.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bindings.hpp"
#include "heom/core/kokkos_arguments.hpp"

namespace heom::python {
namespace {

std::set<KokkosHolder*>& holders() {
  static std::set<KokkosHolder*> live;
  return live;
}
bool g_finalized = false;
// Python's classes of heom's run failures (set once, at import).
PyObject* g_integration_error = nullptr;
PyObject* g_steady_state_error = nullptr;

/// Releases every holder, then Kokkos (registered with atexit by heom/__init__.py).
void finalize() {
  const std::set<KokkosHolder*> live = holders();
  for (KokkosHolder* holder : live) holder->release();
  if (Kokkos::is_initialized()) Kokkos::finalize();
  g_finalized = true;
}

int host_threads() { return Kokkos::DefaultHostExecutionSpace().concurrency(); }

/// A drive's f(t) from a Python callable f(t) -> number: called with the GIL taken (a run calls it
/// from its stepping thread, without the GIL), the callable released with the GIL taken too. An
/// exception it raises stops the run (or the solver's making) and is raised as it was.
DriveShape python_function_drive(py::function f, const std::string& name, bool real) {
  std::shared_ptr<py::function> held(new py::function(std::move(f)), [](py::function* p) {
    py::gil_scoped_acquire gil;
    delete p;
  });
  return DriveShape::function(
      [held, name](double t) -> complex {
        py::gil_scoped_acquire gil;
        try {
          return (*held)(t).cast<complex>();  // (an exception f raises goes on as py::error_already_set)
        } catch (const py::cast_error&) {
          throw Error("drive \"" + name + "\" returned something that is not a number at t = " + format_number(t));
        }
      },
      name, real);
}

py::tuple exponent_tuple(const Exponent& e) {
  return py::make_tuple(std::string(to_string(e.kind)), e.c, e.v, e.c2, e.partner_c);
}

ExponentKind parse_kind(const std::string& kind) {
  for (ExponentKind k : {ExponentKind::R, ExponentKind::I, ExponentKind::RI, ExponentKind::plus, ExponentKind::minus})
    if (kind == to_string(k)) return k;
  throw Error("exponent kind \"" + kind + "\" is not one of R, I, RI, +, -");
}

/// Whether `expansion` (the key of the same name) asks for Pade rather than Matsubara terms.
bool is_pade(const std::string& expansion) {
  if (expansion != "matsubara" && expansion != "pade")
    throw Error("expansion: \"" + expansion + "\" is not \"matsubara\" or \"pade\"");
  return expansion == "pade";
}

/// Idle and total jiffies of all CPUs so far (/proc/stat's first line), or nothing off Linux.
std::optional<std::pair<double, double>> cpu_times() {
  std::ifstream stat("/proc/stat");
  std::string line, label;
  if (!std::getline(stat, line)) return std::nullopt;
  std::istringstream fields(line);
  fields >> label;
  if (label != "cpu") return std::nullopt;
  double value = 0.0, total = 0.0, idle = 0.0;
  for (int column = 0; fields >> value; ++column) {
    total += value;
    if (column == 3 || column == 4) idle += value;  // (idle, iowait)
  }
  return std::make_pair(idle, total);
}

/// The cores no other process used over the last 50 ms, at least 1 (0: unknown).
int idle_cores() {
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  const auto before = cpu_times();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto after = cpu_times();
  if (cores <= 0 || !before || !after || after->second <= before->second) return 0;
  const double idle = (after->first - before->first) / (after->second - before->second);
  return std::max(1, std::min(cores, static_cast<int>(std::lround(idle * cores))));
}

/// The host threads Kokkos starts with where heom.initialize was not told: HEOM_NUM_THREADS, else
/// OMP_NUM_THREADS (0: Kokkos reads it), else the cores idle now. A thread on a core that another
/// process keeps busy holds up every kernel at its end (measured: perf_tests/python_threads.py).
int default_threads() {
  if (const char* value = std::getenv("HEOM_NUM_THREADS")) {
    char* end = nullptr;
    const long n = std::strtol(value, &end, 10);
    if (end == value || *end != '\0' || n < 1 || n > 4096)
      throw Error("HEOM_NUM_THREADS: expected a number of threads >= 1, got \"" + std::string(value) + "\"");
    return static_cast<int>(n);
  }
  if (std::getenv("OMP_NUM_THREADS")) return 0;
  return idle_cores();
}

}  // namespace

KokkosHolder::KokkosHolder() { holders().insert(this); }
KokkosHolder::~KokkosHolder() { holders().erase(this); }

void ensure_kokkos(int threads) {
  if (g_finalized) throw Error("heom: Kokkos was finalized (the interpreter is exiting)");
  if (Kokkos::is_initialized()) {
    if (threads > 0 && threads != host_threads())
      throw Error("threads: Kokkos already runs with " + std::to_string(host_threads()) +
                  " threads; call heom.initialize(threads=...) before anything else");
    return;
  }
  if (threads <= 0) threads = default_threads();
  // (Kokkos' advice on OMP_PROC_BIND is for programs that own the machine, not a notebook's module.)
  std::vector<std::string> args = {"heom", "--kokkos-disable-warnings"};
  if (threads > 0) args.push_back(kokkos_threads_argument(threads));
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  Kokkos::initialize(argc, argv.data());
}

Matrix to_matrix(const py::handle& array, const std::string& name) {
  if (array.is_none()) throw Error(name + ": expected a 2-d array, got None");
  const ComplexArray a = ComplexArray::ensure(array);
  if (!a) {
    PyErr_Clear();
    throw Error(name + ": expected a 2-d array of numbers");
  }
  if (a.ndim() != 2) throw Error(name + ": expected a 2-d array, got " + std::to_string(a.ndim()) + " dimensions");
  Matrix m(static_cast<int>(a.shape(0)), static_cast<int>(a.shape(1)));
  const auto view = a.unchecked<2>();
  for (int i = 0; i < m.rows(); ++i)
    for (int j = 0; j < m.cols(); ++j) m(i, j) = view(i, j);
  if (const auto bad = m.first_non_finite())
    throw Error(name + ": element (" + std::to_string(bad->first) + ", " + std::to_string(bad->second) +
                ") is not finite");
  return m;
}

ComplexArray to_numpy(const Matrix& m) {
  ComplexArray a({m.rows(), m.cols()});
  std::copy(m.data(), m.data() + std::size_t(m.rows()) * m.cols(), a.mutable_data());
  return a;
}

py::array_t<double> to_numpy(const std::vector<double>& values) {
  // (The shape's constructor: the count's reads the element size from the dtype's struct, whose
  // layout NumPy 2 changed, in pybind11 before 2.12, and gave every element the first's value.)
  py::array_t<double> a(std::vector<py::ssize_t>{static_cast<py::ssize_t>(values.size())});
  std::copy(values.begin(), values.end(), a.mutable_data());
  return a;
}

ComplexArray to_numpy(const std::vector<Matrix>& ms, int rows, int cols) {
  ComplexArray a({static_cast<py::ssize_t>(ms.size()), static_cast<py::ssize_t>(rows), static_cast<py::ssize_t>(cols)});
  complex* out = a.mutable_data();
  for (const Matrix& m : ms) out = std::copy(m.data(), m.data() + std::size_t(rows) * cols, out);
  return a;
}

std::vector<complex> to_complex_vector(const py::handle& values, const std::string& name) {
  const ComplexArray a = ComplexArray::ensure(values);
  if (!a || a.ndim() > 1) {
    PyErr_Clear();
    throw Error(name + ": expected a list of numbers");
  }
  return std::vector<complex>(a.data(), a.data() + a.size());
}

void bind_model(py::module_& m) {
  py::class_<Bath>(m, "Bath", "One bath: a coupling operator and the exponents of its correlation functions.")
      .def_static(
          "drude_lorentz",
          [](const py::handle& Q, double lam, double gamma, double T, int Nk, const std::string& expansion,
             bool terminator) {
            DrudeLorentz p;
            p.lambda = lam;
            p.gamma = gamma;
            p.temperature = T;
            p.terms = Nk;
            p.expansion = is_pade(expansion) ? DrudeLorentzExpansion::Pade : DrudeLorentzExpansion::Matsubara;
            p.terminator = terminator;
            return Bath::drude_lorentz(to_matrix(Q, "Q"), p);
          },
          py::arg("Q"), py::arg("lam"), py::arg("gamma"), py::arg("T"), py::arg("Nk"), py::arg("expansion"),
          py::arg("terminator"))
      .def_static(
          "underdamped",
          [](const py::handle& Q, double lam, double gamma, double w0, double T, int Nk) {
            Underdamped p;
            p.lambda = lam;
            p.gamma = gamma;
            p.w0 = w0;
            p.temperature = T;
            p.terms = Nk;
            return Bath::underdamped(to_matrix(Q, "Q"), p);
          },
          py::arg("Q"), py::arg("lam"), py::arg("gamma"), py::arg("w0"), py::arg("T"), py::arg("Nk"))
      .def_static(
          "from_expansion",
          [](const py::handle& Q, const py::handle& ck_real, const py::handle& vk_real, const py::handle& ck_imag,
             const py::handle& vk_imag, bool combine) {
            CorrelationExpansion e;
            e.ck_real = to_complex_vector(ck_real, "ck_real");
            e.vk_real = to_complex_vector(vk_real, "vk_real");
            e.ck_imag = to_complex_vector(ck_imag, "ck_imag");
            e.vk_imag = to_complex_vector(vk_imag, "vk_imag");
            return Bath::from_expansion(to_matrix(Q, "Q"), e, combine);
          },
          py::arg("Q"), py::arg("ck_real"), py::arg("vk_real"), py::arg("ck_imag"), py::arg("vk_imag"),
          py::arg("combine"))
      .def_static(
          "lorentzian",
          [](const py::handle& Q, double gamma, double W, double mu, double T, int Nk, const std::string& expansion) {
            Lorentzian p;
            p.gamma = gamma;
            p.width = W;
            p.mu = mu;
            p.temperature = T;
            p.terms = Nk;
            p.expansion = is_pade(expansion) ? LorentzianExpansion::Pade : LorentzianExpansion::Matsubara;
            return Bath::lorentzian(to_matrix(Q, "Q"), p);
          },
          py::arg("Q"), py::arg("gamma"), py::arg("W"), py::arg("mu"), py::arg("T"), py::arg("Nk"),
          py::arg("expansion"))
      .def_static(
          "fermionic",
          [](const py::handle& Q, const py::handle& ck_plus, const py::handle& vk_plus, const py::handle& ck_minus,
             const py::handle& vk_minus) {
            FermionicExpansion e;
            e.ck_plus = to_complex_vector(ck_plus, "ck_plus");
            e.vk_plus = to_complex_vector(vk_plus, "vk_plus");
            e.ck_minus = to_complex_vector(ck_minus, "ck_minus");
            e.vk_minus = to_complex_vector(vk_minus, "vk_minus");
            return Bath::fermionic(to_matrix(Q, "Q"), e);
          },
          py::arg("Q"), py::arg("ck_plus"), py::arg("vk_plus"), py::arg("ck_minus"), py::arg("vk_minus"))
      .def_static(
          "from_exponents",
          [](const py::handle& Q, const std::vector<py::tuple>& exponents, complex terminator_delta,
             const std::string& description) {
            std::vector<Exponent> list;
            for (std::size_t i = 0; i < exponents.size(); ++i) {
              const py::tuple& t = exponents[i];
              if (t.size() != 5)
                throw Error("exponents[" + std::to_string(i) + "]: expected (kind, c, v, c2, partner_c)");
              Exponent e;
              e.kind = parse_kind(t[0].cast<std::string>());
              e.c = t[1].cast<complex>();
              e.v = t[2].cast<complex>();
              e.c2 = t[3].cast<complex>();
              e.partner_c = t[4].cast<complex>();
              list.push_back(e);
            }
            Bath bath(to_matrix(Q, "Q"), std::move(list), description);
            if (terminator_delta != complex(0.0)) bath.set_terminator(terminator_delta);
            return bath;
          },
          py::arg("Q"), py::arg("exponents"), py::arg("terminator_delta") = complex(0.0),
          py::arg("description") = "exponents")
      .def_property_readonly("Q", [](const Bath& b) { return to_numpy(b.coupling()); })
      .def_property_readonly("exponents",
                             [](const Bath& b) {
                               py::list list;
                               for (const Exponent& e : b.exponents()) list.append(exponent_tuple(e));
                               return list;
                             })
      .def_property_readonly("is_fermionic", &Bath::is_fermionic)
      .def_property_readonly("terminator_delta", &Bath::terminator_delta)
      .def_property_readonly("description", &Bath::description)
      .def("__repr__", [](const Bath& b) {
        return "<heom.Bath " + b.description() + ", " + std::to_string(b.num_exponents()) + " exponents>";
      });

  py::class_<DriveShape>(m, "DriveShape", "A drive's f(t): H(t) = H + sum f_i(t) op_i.")
      .def_static("cosine", &DriveShape::cosine, py::arg("amplitude"), py::arg("frequency"), py::arg("phase") = 0.0)
      .def_static("gaussian", &DriveShape::gaussian, py::arg("amplitude"), py::arg("center"), py::arg("width"),
                  py::arg("frequency") = 0.0, py::arg("phase") = 0.0)
      .def_static("constant", &DriveShape::constant, py::arg("amplitude"), py::arg("start"), py::arg("end"))
      .def_static("table", &DriveShape::table, py::arg("times"), py::arg("values"))
      .def_static("function", &python_function_drive, py::arg("f"), py::arg("name"), py::arg("real") = true)
      .def(
          "__call__", [](const DriveShape& s, double t) { return s(t); }, py::arg("t"))
      .def_property_readonly("is_real", &DriveShape::is_real)
      .def("__repr__", [](const DriveShape& s) { return "<heom.DriveShape " + s.description() + ">"; });

  py::class_<Model>(m, "Model", "A Hamiltonian, its baths and Lindblad terms.")
      .def(
          py::init([](const py::handle& H, const std::vector<Bath>& baths) { return Model(to_matrix(H, "H"), baths); }),
          py::arg("H"), py::arg("baths"))
      .def(
          "add_lindblad",
          [](Model& model, const py::handle& L, double rate) -> Model& {
            return model.add_lindblad(to_matrix(L, "L"), rate);
          },
          py::arg("L"), py::arg("rate"), py::return_value_policy::reference_internal)
      .def(
          "add_drive",
          [](Model& model, const py::handle& op, const DriveShape& shape) -> Model& {
            return model.add_drive(to_matrix(op, "op"), shape);
          },
          py::arg("op"), py::arg("shape"), py::return_value_policy::reference_internal)
      .def_property_readonly("is_driven", [](const Model& model) { return !model.drives().empty(); })
      .def(
          "with_hamiltonian",
          [](const Model& model, const py::handle& H) { return model.with_hamiltonian(to_matrix(H, "H")); },
          py::arg("H"))
      .def_property_readonly("H", [](const Model& model) { return to_numpy(model.hamiltonian()); })
      .def_property_readonly("baths", &Model::baths)
      .def_property_readonly("dimension", &Model::dimension)
      .def_property_readonly("num_exponents", &Model::num_exponents)
      .def_property_readonly("max_excitations", &Model::max_excitations);

  m.def(
      "count_ados",
      [](const std::vector<int>& max_excitations, int depth) { return Hierarchy::count(max_excitations, depth); },
      py::arg("max_excitations"), py::arg("depth"));
  m.def(
      "with_diagonal_disorder",
      [](const py::handle& H, const std::vector<double>& sigma, std::uint64_t seed, std::uint64_t realization) {
        return to_numpy(with_diagonal_disorder(to_matrix(H, "H"), sigma, seed, realization));
      },
      py::arg("H"), py::arg("sigma"), py::arg("seed"), py::arg("realization"));
  m.def(
      "disorder_realizations",
      [](const Model& model, const std::vector<double>& sigma, std::int64_t members, std::uint64_t seed) {
        if (members < 1) throw Error("members must be >= 1, got " + std::to_string(members));
        std::vector<Model> realizations;
        realizations.reserve(static_cast<std::size_t>(members));
        for (std::int64_t r = 0; r < members; ++r)
          realizations.push_back(model.with_hamiltonian(
              with_diagonal_disorder(model.hamiltonian(), sigma, seed, static_cast<std::uint64_t>(r))));
        return realizations;
      },
      py::arg("model"), py::arg("sigma"), py::arg("members"), py::arg("seed"));
}

}  // namespace heom::python

PYBIND11_MODULE(_heom, m) {
  namespace py = pybind11;
  using namespace heom::python;
  m.doc() = "heom's compiled core; use the heom package";
  // Errors as Python's: bad parameters ValueError, a hierarchy that does not fit MemoryError, a run
  // that fails RuntimeError subclasses. (Leaked on purpose: they live as long as the interpreter.)
  g_integration_error = (new py::exception<heom::IntegrationError>(m, "IntegrationError", PyExc_RuntimeError))->ptr();
  g_steady_state_error = (new py::exception<heom::SteadyStateError>(m, "SteadyStateError", PyExc_RuntimeError))->ptr();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const heom::OutOfMemoryError& e) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const heom::IntegrationError& e) {
      PyErr_SetString(g_integration_error, e.what());
    } catch (const heom::SteadyStateError& e) {
      PyErr_SetString(g_steady_state_error, e.what());
    } catch (const heom::Error& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  m.def("initialize", &ensure_kokkos, py::arg("threads") = 0,
        "Starts Kokkos with `threads` host threads (0: HEOM_NUM_THREADS, else OMP_NUM_THREADS, else the cores "
        "idle now); heom starts it on first use.");
  m.def("finalize", &finalize, "Frees every solver's memory and finalizes Kokkos (at interpreter exit).");
  m.def("is_initialized", [] { return Kokkos::is_initialized(); });
  m.def("threads", [] {
    ensure_kokkos();
    return host_threads();
  });
  m.attr("execution_space") = Exec::name();
  m.attr("version") = HEOM_VERSION_STRING;
  bind_model(m);
  bind_solver(m);
}
