// heom._heom's solvers: one model or a batch on one device, one hierarchy split between the devices
// of this process, and ensembles. Long calls release the GIL; a ticker takes it back at most ten
// times a second to report progress and to see Ctrl-C (KeyboardInterrupt), which stops the run
// between two steps.
#include <cmath>
#include <pybind11/complex.h>
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bindings.hpp"

namespace heom::python {
namespace {

/// Thrown from a step callback when Python has an exception to raise (Ctrl-C, or the progress
/// callback's own): the run stops between two steps and the Python error is raised.
struct PythonErrorPending : std::exception {
  const char* what() const noexcept override { return "interrupted from Python"; }
};

/// Called from the stepping threads (without the GIL; an ensemble's devices call it at once): at most
/// every `interval` seconds it takes the GIL, lets Python handle signals, and calls `report(value)`
/// when given.
class Ticker {
 public:
  explicit Ticker(py::object report, double interval = 0.1) : m_report(std::move(report)), m_interval(interval) {}
  ~Ticker() {
    py::gil_scoped_acquire gil;  // (m_report is a Python object)
    m_report = py::object();
  }
  template <class... Args>
  void operator()(Args... args) {
    {
      const std::lock_guard<std::mutex> lock(m_mutex);
      const auto now = std::chrono::steady_clock::now();
      if (std::chrono::duration<double>(now - m_last).count() < m_interval) return;
      m_last = now;
    }
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw PythonErrorPending();
    if (!m_report || m_report.is_none()) return;
    try {
      m_report(args...);
    } catch (py::error_already_set& e) {
      e.restore();
      throw PythonErrorPending();
    }
  }

 private:
  py::object m_report;
  double m_interval;
  std::mutex m_mutex;
  std::chrono::steady_clock::time_point m_last{};
};

/// Runs f without the GIL; a Python error raised meanwhile (Ctrl-C, a callback's) is raised as it
/// was, whatever C++ exception carried it out.
template <class F>
auto without_gil(F&& f) -> decltype(f()) {
  try {
    py::gil_scoped_release release;
    return f();
  } catch (...) {
    if (PyErr_Occurred()) throw py::error_already_set();
    throw;
  }
}

/// Starts Kokkos; on a CPU, `devices` simulated devices share its threads, at least one each.
/// `gpu_ids` place split devices on GPUs (CUDA builds: run_on_devices). Refusals name the keyword
/// arguments: devices, gpus.
void ensure_devices(int devices, const std::vector<int>& gpu_ids) {
  const Devices request{devices, gpu_ids};
  const auto fail = [](const OptionProblem& p, const std::string& advice = "") {
    throw Error((p.field == "count" ? "devices: " : "gpus: ") + p.problem + advice);
  };
  if (const auto problem = request.validate(device_context<Exec>(), false)) fail(*problem);
  if (!gpu_ids.empty() && devices < 2)
    throw Error("gpus: places the devices of a split (devices >= 2); one device runs on Kokkos' own GPU");
  ensure_kokkos();
  if (const auto problem =
          request.validate(device_context<Exec>(Kokkos::DefaultHostExecutionSpace().concurrency()), true))
    fail(*problem, problem->field == "count" && problem->problem.find("need a thread each") != std::string::npos
                       ? " (call heom.initialize(threads=" + std::to_string(devices) + ") before anything else)"
                       : "");
}

/// The options of heom.Solver's keyword arguments: their names are RunSettings', as the program's
/// input keys are, and make_solver_options' refusals name them.
SolverOptions solver_options(const std::string& method, double rtol, double atol, double step, double max_step,
                             int max_order, const std::string& kernel, std::uint64_t memory_limit,
                             bool observe_lead_currents, double threshold, bool observe_ados) {
  RunSettings settings;
  settings.method = method;
  settings.rtol = rtol;
  settings.atol = atol;
  settings.step = step;
  settings.max_step = max_step;
  settings.max_order = max_order;
  settings.kernel = kernel;
  settings.memory_limit = memory_limit;
  settings.observe_lead_currents = observe_lead_currents;
  settings.threshold = threshold;
  SolverOptions options = make_solver_options(settings);
  options.observe_all_ados = observe_ados;
  return options;
}

/// What a run returns to Python.
struct RunOutput {
  std::vector<double> times;
  std::vector<std::vector<Matrix>> rho;                    // [member][time]
  std::vector<std::vector<std::vector<complex>>> current;  // [member][time][bath]
  std::vector<std::vector<complex>> ados;                  // [time][ADO, row, column] (observe_all_ados)
  IntegratorStatistics statistics;
  double wall_time_s = 0.0;
};

/// Currents [time][bath] as a complex [nt, baths] array.
ComplexArray currents_array(const std::vector<std::vector<complex>>& at_times, int baths) {
  ComplexArray a({static_cast<py::ssize_t>(at_times.size()), static_cast<py::ssize_t>(baths)});
  complex* p = a.mutable_data();
  for (const auto& at : at_times) p = std::copy(at.begin(), at.end(), p);
  return a;
}

py::dict to_python(const RunOutput& out, int n, int baths, bool currents) {
  py::dict d;
  d["times"] = to_numpy(out.times);
  py::list states;
  for (const auto& rho : out.rho) states.append(to_numpy(rho, n, n));
  d["states"] = states;
  if (currents) {
    py::list list;
    for (const auto& member : out.current) list.append(currents_array(member, baths));
    d["currents"] = list;
  } else {
    d["currents"] = py::none();
  }
  if (!out.ados.empty()) {
    const auto per_time = static_cast<py::ssize_t>(out.ados.front().size());
    ComplexArray a({static_cast<py::ssize_t>(out.ados.size()), per_time / (n * n), static_cast<py::ssize_t>(n),
                    static_cast<py::ssize_t>(n)});
    complex* p = a.mutable_data();
    for (const auto& at : out.ados) p = std::copy(at.begin(), at.end(), p);
    d["ados"] = a;
  } else {
    d["ados"] = py::none();
  }
  d["steps"] = out.statistics.steps;
  d["rejected"] = out.statistics.rejected;
  d["evaluations"] = out.statistics.rhs_evaluations;
  d["wall_time"] = out.wall_time_s;
  return d;
}

/// Observes every member's rho (and currents) at each output time, and with `every_ado` one model's
/// every ADO.
void observe(RunOutput& out, const Snapshot<Exec>& s, int members, bool every_ado) {
  out.times.push_back(s.time);
  for (int m = 0; m < members; ++m) {
    out.rho[m].push_back(s.rho(m));
    if (!s.lead_currents.empty()) out.current[m].push_back(s.lead_currents[m]);
  }
  if (every_ado) {
    const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.ados);
    std::vector<complex>& at = out.ados.emplace_back(host.size());
    for (std::size_t i = 0; i < host.size(); ++i) at[i] = complex(host.data()[i].real(), host.data()[i].imag());
  }
}

/// On a hierarchy split between ranks the observer ran on the rank that holds rho: the others receive
/// what it saw (times, rho and `baths` currents at each), so that every rank returns the whole result.
void share_observations(const Distribution& d, RunOutput& out, int n, int baths) {
  const Communicator& ranks = *d.communicator;
  const auto nt = static_cast<std::size_t>(ranks.max(d.owns_rho() ? static_cast<double>(out.times.size()) : 0.0));
  const std::size_t per_time = 1 + 2 * (static_cast<std::size_t>(n) * n + static_cast<std::size_t>(baths));
  if (nt * per_time > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw Error("tlist: " + std::to_string(nt) + " output times of this model are more than one MPI broadcast " +
                "carries; run them in parts");
  std::vector<double> packed(nt * per_time);
  const auto pack = [](const complex* z, std::size_t count, double* to) {
    return std::copy_n(reinterpret_cast<const double*>(z), 2 * count, to);
  };
  if (d.owns_rho()) {
    double* p = packed.data();
    for (std::size_t i = 0; i < nt; ++i) {
      *p++ = out.times[i];
      p = pack(out.rho.front()[i].data(), static_cast<std::size_t>(n) * n, p);
      if (baths > 0) p = pack(out.current.front()[i].data(), static_cast<std::size_t>(baths), p);
    }
  }
  ranks.broadcast(packed.data(), static_cast<int>(packed.size()), d.rho_owner());
  if (d.owns_rho()) return;
  const double* p = packed.data();
  for (std::size_t i = 0; i < nt; ++i) {
    out.times.push_back(*p++);
    Matrix rho(n, n);
    std::copy_n(p, 2 * static_cast<std::size_t>(n) * n, reinterpret_cast<double*>(rho.data()));
    p += 2 * static_cast<std::size_t>(n) * n;
    out.rho.front().push_back(std::move(rho));
    if (baths > 0) {
      std::vector<complex> current(static_cast<std::size_t>(baths));
      std::copy_n(p, 2 * static_cast<std::size_t>(baths), reinterpret_cast<double*>(current.data()));
      p += 2 * static_cast<std::size_t>(baths);
      out.current.front().push_back(std::move(current));
    }
  }
}

/// A Solver of one model or a batch on one device, or the recipe for a hierarchy split between
/// `devices` devices of this process (each run() then builds the split solvers afresh).
class PySolver : public KokkosHolder {
 public:
  PySolver(std::vector<Model> models, int depth, SolverOptions options, int devices, std::vector<int> gpu_ids,
           const py::object& comm)
      : m_models(std::move(models)),
        m_depth(depth),
        m_options(std::move(options)),
        m_devices(devices),
        m_gpu_ids(std::move(gpu_ids)) {
    if (m_models.empty()) throw Error("models: at least one model");
    if (devices > 1 && m_models.size() > 1)
      throw Error("devices: a batch of models runs on one device (an ensemble spreads members over devices)");
    if (!comm.is_none() && (devices > 1 || m_models.size() > 1))
      throw Error(devices > 1 ? "devices: with comm, each rank is one device of the hierarchy"
                              : "comm: a batch of models runs on one device (run_ensemble spreads members over ranks)");
    if (m_options.observe_all_ados && (devices > 1 || m_models.size() > 1 || !comm.is_none()))
      throw Error("ado_states: every ADO at every output time is kept for one model on one device");
    ensure_devices(devices, m_gpu_ids);
    m_options.communicator = ranks_of(comm);
    if (devices == 1)
      m_solver = m_models.size() == 1 ? std::make_unique<Solver<Exec>>(Exec(), m_models.front(), depth, m_options)
                                      : std::make_unique<Solver<Exec>>(Exec(), m_models, depth, m_options);
    else if (depth < 0)  // (as the Solver says; the split solvers are made at each run)
      throw Error("depth must be >= 0, got " + std::to_string(depth));
  }
  void release() override {
    m_solver.reset();
    m_released = true;
  }

  Solver<Exec>& solver(const char* what) {
    if (m_released) throw Error(std::string(what) + ": heom was finalized");
    if (!m_solver)
      throw Error(std::string(what) + ": a hierarchy split between " + std::to_string(m_devices) +
                  " devices is held only during run()");
    return *m_solver;
  }
  /// The solver of a call that needs every ADO in this process.
  Solver<Exec>& whole_solver(const char* what) {
    Solver<Exec>& s = solver(what);
    if (s.distribution() && s.distribution()->parts() > 1)
      throw Error(std::string(what) + ": the hierarchy is split between the " +
                  std::to_string(s.distribution()->parts()) + " ranks of comm, each holding its part; run() and " +
                  "statistics are what a split hierarchy offers");
    return s;
  }

  py::dict run(const py::object& rho0, const std::vector<double>& times, const py::object& progress) {
    if (times.empty()) throw Error("tlist: at least one time");
    for (std::size_t i = 1; i < times.size(); ++i)
      if (!(times[i] >= times[i - 1])) throw Error("tlist: times must ascend (entry " + std::to_string(i) + ")");
    const int members = static_cast<int>(m_models.size()), n = m_models.front().dimension();
    std::vector<Matrix> start;
    if (!rho0.is_none()) {
      if (members == 1) {
        start.push_back(to_matrix(rho0, "rho0"));
      } else {
        const py::sequence list = rho0.cast<py::sequence>();
        if (static_cast<int>(list.size()) != members)
          throw Error("rho0: " + std::to_string(list.size()) + " initial states for " + std::to_string(members) +
                      " models");
        for (int m = 0; m < members; ++m) start.push_back(to_matrix(list[m], "rho0[" + std::to_string(m) + "]"));
      }
    }
    RunOutput out;
    out.rho.resize(members);
    out.current.resize(members);
    Ticker ticker(progress);
    const auto begin = std::chrono::steady_clock::now();
    if (m_devices == 1) {
      Solver<Exec>& s = solver("run");
      const bool every_ado = m_options.observe_all_ados;
      if (start.empty() && times.front() < s.time())
        throw Error("tlist: starts at " + format_number(times.front()) + ", before the solver's time " +
                    format_number(s.time()) + " (give rho0 to start afresh)");
      const IntegratorStatistics before = s.statistics();
      without_gil([&] {
        if (!start.empty()) {
          if (members == 1)
            s.set_initial_state(start.front(), times.front());
          else
            s.set_initial_states(start, times.front());
        }
        s.run(
            times, [&](const Snapshot<Exec>& snap) { observe(out, snap, members, every_ado); },
            [&](double t) { ticker(t); });
      });
      if (s.distribution())
        share_observations(*s.distribution(), out, n,
                           m_options.observe_lead_currents ? static_cast<int>(m_models.front().baths().size()) : 0);
      out.statistics.steps = s.statistics().steps - before.steps;
      out.statistics.rejected = s.statistics().rejected - before.rejected;
      out.statistics.rhs_evaluations = s.statistics().rhs_evaluations - before.rhs_evaluations;
    } else {
      if (start.empty()) throw Error("rho0: a hierarchy split between devices starts from rho0 at every run()");
      without_gil([&] {
        run_on_devices(
            Exec(), m_devices,
            [&](const Exec& exec, int d, std::shared_ptr<const Communicator> comm) {
              SolverOptions options = m_options;
              options.communicator = std::move(comm);
              Solver<Exec> s(exec, m_models.front(), m_depth, options);
              s.set_initial_state(start.front(), times.front());
              s.run(
                  times, [&](const Snapshot<Exec>& snap) { observe(out, snap, 1, false); },
                  [&](double t) {
                    if (d == 0) ticker(t);
                  });
              if (d == 0) out.statistics = s.statistics();
            },
            m_gpu_ids);
      });
    }
    out.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    int baths = static_cast<int>(m_models.front().baths().size());
    return to_python(out, n, baths, m_options.observe_lead_currents);
  }

  /// The GMRES settings of a steady state or a solve in frequency.
  static SteadyStateOptions gmres_options(double tolerance, int restart, int max_iterations,
                                          const std::string& preconditioner) {
    SteadyStateOptions options;
    options.tolerance = tolerance;
    options.restart = restart;
    options.max_iterations = max_iterations;
    const std::optional<SteadyPreconditioner> chosen = preconditioner_named(preconditioner);
    if (!chosen)
      throw Error("preconditioner: unknown preconditioner \"" + preconditioner + "\" (expected " +
                  preconditioner_names() + ")");
    options.preconditioner = *chosen;
    return options;
  }

  py::tuple steady_state(double tolerance, int restart, int max_iterations, const std::string& preconditioner,
                         double fallback_time, const py::object& progress) {
    Solver<Exec>& s = solver("steady_state");
    SteadyStateOptions options = gmres_options(tolerance, restart, max_iterations, preconditioner);
    options.fallback_time = fallback_time;
    Ticker ticker(progress);
    options.progress = [&](int iterations, double residual) { ticker(iterations, residual); };
    const SteadyStateReport report = without_gil([&] { return s.solve_steady_state(options); });
    py::dict r;
    r["residual"] = report.residual;
    r["iterations"] = report.iterations;
    r["cycles"] = report.cycles;
    r["fell_back"] = report.fell_back;
    return py::make_tuple(to_numpy(s.rho()), r);
  }

  ComplexArray ados(const char* what) {
    Solver<Exec>& s = whole_solver(what);
    const AdoView<Exec> view = s.ados();
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), view);
    ComplexArray a({view.extent(0), view.extent(1), view.extent(2)});
    complex* p = a.mutable_data();
    for (std::size_t i = 0; i < host.size(); ++i) p[i] = complex(host.data()[i].real(), host.data()[i].imag());
    return a;
  }

  /// Every ADO from `ados` [num_ados, n, n] (in labels()' order) at time t0: a start that continues a
  /// hierarchy's state, such as QuTiP's ado_init.
  void set_ados(const ComplexArray& ados, double t0) {
    Solver<Exec>& s = whole_solver("set_ados");
    if (s.members() != 1) throw Error("ados: one model (not a batch)");
    const auto count = static_cast<py::ssize_t>(s.hierarchy().size());
    const auto n = static_cast<py::ssize_t>(s.model().dimension());
    if (ados.ndim() != 3 || ados.shape(0) != count || ados.shape(1) != n || ados.shape(2) != n) {
      std::string shape;
      for (py::ssize_t d = 0; d < ados.ndim(); ++d) shape += (d ? ", " : "") + std::to_string(ados.shape(d));
      throw Error("ados: expected shape (" + std::to_string(count) + ", " + std::to_string(n) + ", " +
                  std::to_string(n) + ") for this hierarchy, got (" + shape + ")");
    }
    using Blocks = Kokkos::View<device_complex***, Kokkos::LayoutRight, typename Exec::memory_space>;
    const Blocks view = impl::to_device<Blocks>(s.execution_space_instance(), "heom::python::ados", ados.data(),
                                                static_cast<std::size_t>(count), static_cast<std::size_t>(n),
                                                static_cast<std::size_t>(n));
    without_gil([&] { s.set_initial_ados(view, t0); });
  }

  py::array_t<int> labels() {
    const Hierarchy& h = whole_solver("labels").hierarchy();
    py::array_t<int> a({h.size(), h.num_exponents()});
    std::copy(h.labels_table().begin(), h.labels_table().end(), a.mutable_data());
    return a;
  }

  std::vector<complex> lead_currents() {
    Solver<Exec>& s = whole_solver("lead_currents");
    if (s.members() != 1) throw Error("lead_currents: one model (not a batch)");
    return heom::lead_currents(s.execution_space_instance(), s.model(), s.hierarchy(), s.ados());
  }

  std::vector<complex> correlation(const py::handle& a, const py::handle& b, const std::vector<double>& delays,
                                   const py::object& progress) {
    Solver<Exec>& s = whole_solver("correlation");
    const Matrix A = to_matrix(a, "A"), B = to_matrix(b, "B");
    Ticker ticker(progress);
    const double t0 = s.time();
    return without_gil([&] { return correlation_function(s, A, B, delays, [&](double t) { ticker(t - t0); }); });
  }

  std::vector<complex> anticommutator(const py::handle& d, const std::vector<double>& delays,
                                      const py::object& progress) {
    Solver<Exec>& s = whole_solver("anticommutator_correlation");
    const Matrix D = to_matrix(d, "d");
    Ticker ticker(progress);
    return without_gil([&] { return anticommutator_correlation(s, D, delays, [&](double t) { ticker(t); }); });
  }

  py::tuple density_of_states(const py::handle& d, const std::vector<double>& omegas, double tolerance, int restart,
                              int max_iterations, const std::string& preconditioner, const py::object& progress) {
    Solver<Exec>& s = whole_solver("density_of_states");
    const Matrix D = to_matrix(d, "d");
    const SteadyStateOptions options = gmres_options(tolerance, restart, max_iterations, preconditioner);
    Ticker ticker(progress);
    FrequencySolveReport report;
    const std::vector<double> a = without_gil([&] {
      return density_of_states_in_frequency(
          s, D, omegas, options, [&](std::int64_t done) { ticker(static_cast<double>(done)); }, &report);
    });
    py::dict r;
    r["solves"] = report.solves;
    r["iterations"] = report.iterations;
    r["worst_residual"] = report.worst_residual;
    return py::make_tuple(a, r);
  }

  py::dict info() {
    py::dict d;
    d["devices"] = m_devices;
    d["members"] = static_cast<int>(m_models.size());
    // (A split hierarchy's is counted, not built here; counting a truncated one walks its triangle.)
    d["num_ados"] = m_solver ? static_cast<std::uint64_t>(m_solver->hierarchy().size())
                             : Hierarchy::count(m_models.front().max_excitations(), m_depth,
                                                {m_options.importance_threshold, m_models.front().exponent_weights()});
    d["kernel"] = m_solver ? std::string(to_string(m_solver->kernel())) : std::string("per device");
    d["bytes"] = m_solver ? m_solver->memory_plan().bytes_total : 0;
    return d;
  }

  double time() { return solver("time").time(); }
  py::dict statistics() {
    const IntegratorStatistics& st = solver("statistics").statistics();
    py::dict d;
    d["steps"] = st.steps;
    d["rejected"] = st.rejected;
    d["evaluations"] = st.rhs_evaluations;
    return d;
  }
  int ado_index(const std::vector<int>& label) { return whole_solver("ado").hierarchy().index_of(label); }

 private:
  std::vector<Model> m_models;
  int m_depth;
  SolverOptions m_options;
  int m_devices;
  std::vector<int> m_gpu_ids;
  std::unique_ptr<Solver<Exec>> m_solver;
  bool m_released = false;
};

py::dict ensemble(const std::vector<Model>& models, const py::object& rho0, const std::vector<double>& times, int depth,
                  const SolverOptions& options, int devices, const std::vector<int>& gpu_ids, int batch,
                  bool store_members, const py::object& comm, const py::object& progress) {
  if (models.empty()) throw Error("models: at least one member");
  ensure_devices(devices, gpu_ids);
  std::vector<EnsembleMember> members;
  const bool one_start = py::isinstance<py::array>(rho0) && rho0.cast<py::array>().ndim() == 2;
  const py::sequence starts = one_start ? py::sequence() : rho0.cast<py::sequence>();
  if (!one_start && starts.size() != models.size())
    throw Error("rho0: " + std::to_string(starts.size()) + " initial states for " + std::to_string(models.size()) +
                " members");
  const Matrix common = one_start ? to_matrix(rho0, "rho0") : Matrix();
  for (std::size_t i = 0; i < models.size(); ++i)
    members.push_back({models[i], one_start ? common : to_matrix(starts[i], "rho0[" + std::to_string(i) + "]")});
  EnsembleOptions e;
  e.depth = depth;
  e.solver = options;
  e.devices = devices;
  e.gpu_ids = gpu_ids;
  e.batch = batch;
  e.ranks = ranks_of(comm);
  Ticker ticker(progress);
  e.progress = [&](std::int64_t finished, std::int64_t total) { ticker(finished, total); };
  Ticker interrupts{py::none()};
  e.on_step = [&](int, double) { interrupts(); };
  const EnsembleResult result = without_gil([&] { return run_ensemble(Exec(), members, times, e); });
  const int n = models.front().dimension();
  py::dict d;
  d["times"] = to_numpy(result.times);
  d["mean"] = result.mean.empty() ? py::object(py::none()) : py::object(to_numpy(result.mean, n, n));
  py::list states, currents;
  std::int64_t steps = 0;
  for (const MemberResult& m : result.members) {
    steps += m.statistics.steps;
    if (!store_members) continue;
    states.append(to_numpy(m.rho, m.rho.empty() ? 0 : m.rho.front().rows(), m.rho.empty() ? 0 : m.rho.front().cols()));
    if (options.observe_lead_currents) {
      const int baths = m.lead_currents.empty() ? 0 : static_cast<int>(m.lead_currents.front().size());
      currents.append(currents_array(m.lead_currents, baths));
    }
  }
  d["states"] = store_members ? py::object(states) : py::object(py::none());
  d["currents"] = store_members && options.observe_lead_currents ? py::object(currents) : py::object(py::none());
  d["steps"] = steps;
  d["workers"] = result.workers;
  return d;
}

/// heom.response_2d's computation: the manifolds of the one-exciton model, the third-order response
/// on one device (the GIL released; progress sees the t3 propagations done), returned as numpy arrays.
py::dict response(const py::handle& hamiltonian, const std::vector<Dipole>& dipoles, const std::vector<Bath>& baths,
                  double biexciton_shift, int depth, const SolverOptions& options,
                  const std::vector<double>& waiting_times, double t1_step, int t1_points, double t3_step,
                  int t3_points, const std::vector<std::string>& pathways, const std::vector<std::string>& signals,
                  const std::string& polarization, bool isotropic, const py::object& progress) {
  ExcitonAggregate aggregate;
  aggregate.hamiltonian = to_matrix(hamiltonian, "hamiltonian");
  aggregate.dipoles = dipoles;
  aggregate.baths = baths;
  ResponseSettings settings;
  settings.waiting_times = waiting_times;
  settings.t1_step = t1_step;
  settings.t1_points = t1_points;
  settings.t3_step = t3_step;
  settings.t3_points = t3_points;
  settings.pathways = pathways;
  settings.signals = signals;
  settings.polarization = polarization;
  settings.isotropic = isotropic;
  settings.biexciton_shift = biexciton_shift;
  const ResponseOptions o = make_response_options(settings);
  const ExcitonManifolds manifolds = response_manifolds(std::move(aggregate), settings, o);
  ensure_kokkos();
  Ticker ticker(progress);
  ThirdOrderResponse r = without_gil([&] {
    const Propagator<Exec> propagator(Exec(), manifolds.model, depth, options);
    return third_order_response(propagator, manifolds, o, [&](std::int64_t done, std::int64_t total) {
      ticker(static_cast<double>(done), static_cast<double>(total));
    });
  });
  py::dict d;
  d["t1"] = to_numpy(r.t1);
  d["waiting_times"] = to_numpy(r.waiting_times);
  d["t3"] = to_numpy(r.t3);
  std::vector<std::string> signal_names, pathway_names;
  for (const ResponseSignal s : r.signals) signal_names.push_back(to_string(s));
  for (const Pathway p : r.pathways) pathway_names.push_back(to_string(p));
  d["signals"] = signal_names;
  d["pathways"] = pathway_names;
  ComplexArray values({r.signals.size(), r.pathways.size(), r.waiting_times.size(), r.t1.size(), r.t3.size()});
  std::copy(r.values.begin(), r.values.end(), values.mutable_data());
  d["values"] = values;
  d["levels"] = manifolds.dimension();
  d["propagations"] = r.propagations;
  d["steps"] = r.statistics.steps;
  d["evaluations"] = r.statistics.rhs_evaluations;
  return d;
}
}  // namespace

void bind_solver(py::module_& m) {
  m.def("solver_options", &solver_options, py::arg("method"), py::arg("rtol"), py::arg("atol"), py::arg("step"),
        py::arg("max_step"), py::arg("max_order"), py::arg("kernel"), py::arg("memory_limit"),
        py::arg("observe_lead_currents"), py::arg("threshold"), py::arg("observe_ados") = false);
  py::class_<SolverOptions>(m, "SolverOptions");
  py::class_<PySolver>(m, "Solver")
      .def(py::init<std::vector<Model>, int, SolverOptions, int, std::vector<int>, const py::object&>(),
           py::arg("models"), py::arg("depth"), py::arg("options"), py::arg("devices"), py::arg("gpus"),
           py::arg("comm"))
      .def("run", &PySolver::run, py::arg("rho0"), py::arg("tlist"), py::arg("progress"))
      .def("steady_state", &PySolver::steady_state, py::arg("tolerance"), py::arg("restart"), py::arg("max_iterations"),
           py::arg("preconditioner"), py::arg("fallback_time"), py::arg("progress"))
      .def("ados", [](PySolver& s) { return s.ados("ados"); })
      .def("labels", &PySolver::labels)
      .def("set_ados", &PySolver::set_ados, py::arg("ados"), py::arg("t0"))
      .def("ado_index", &PySolver::ado_index, py::arg("label"))
      .def("lead_currents", &PySolver::lead_currents)
      .def("correlation", &PySolver::correlation, py::arg("A"), py::arg("B"), py::arg("taus"), py::arg("progress"))
      .def("anticommutator", &PySolver::anticommutator, py::arg("d"), py::arg("taus"), py::arg("progress"))
      .def("density_of_states", &PySolver::density_of_states, py::arg("d"), py::arg("omegas"), py::arg("tolerance"),
           py::arg("restart"), py::arg("max_iterations"), py::arg("preconditioner"), py::arg("progress"))
      .def("info", &PySolver::info)
      .def("statistics", &PySolver::statistics)
      .def_property_readonly("time", &PySolver::time);
  m.def("third_order_response", &response, py::arg("hamiltonian"), py::arg("dipoles"), py::arg("baths"),
        py::arg("biexciton_shift"), py::arg("depth"), py::arg("options"), py::arg("waiting_times"), py::arg("t1_step"),
        py::arg("t1_points"), py::arg("t3_step"), py::arg("t3_points"), py::arg("pathways"), py::arg("signals"),
        py::arg("polarization"), py::arg("isotropic"), py::arg("progress"));
  m.def("run_ensemble", &ensemble, py::arg("models"), py::arg("rho0"), py::arg("tlist"), py::arg("depth"),
        py::arg("options"), py::arg("devices"), py::arg("gpus"), py::arg("batch"), py::arg("store_members"),
        py::arg("comm"), py::arg("progress"));
}

}  // namespace heom::python
