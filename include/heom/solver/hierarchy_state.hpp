// heom::HierarchyState: every ADO of a hierarchy at one time, on one execution-space instance, with
// the integrator's history (what its next steps read): a value that can be copied, saved, added to
// another and acted on by operators from the left or the right. A Propagator makes states and steps
// them; correlation functions and spectra are propagations of states branched this way.
#ifndef HEOM_SOLVER_HIERARCHY_STATE_HPP
#define HEOM_SOLVER_HIERARCHY_STATE_HPP

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "heom/core/matrix.hpp"
#include "heom/integrator/integrator.hpp"
#include "heom/solver/propagator.hpp"
#include "heom/solver/snapshot.hpp"
#include "heom/solver/solver_state.hpp"

namespace heom {

/// Which side an operator multiplies each ADO from: op x_a or x_a op.
enum class Side { left, right };

/// Where Method::automatic stands on a state (its rule: automatic_window in options.hpp).
struct AutomaticChoice {
  std::int64_t window_step = 0;          ///< the step count when the window opened (or exp-adams started)
  double window_time = -1.0;             ///< the time then (< 0: exp-adams' first steps, no window yet)
  std::int64_t window_applications = 0;  ///< the applications then
  double last_rate = -1.0;               ///< the window before's applications per unit of time (< 0: none)
  bool decided = false;
  double chebyshev_from = -1.0;  ///< the time chebyshev took over (< 0: it did not)

  /// A checkpoint's names of the fields, and the fields as numbers in that order (saved and loaded
  /// with the integrator's scalars).
  static constexpr std::array<const char*, 6> names = {
      "automatic_window_step", "automatic_window_time", "automatic_window_applications",
      "automatic_last_rate",   "automatic_decided",     "automatic_chebyshev_from"};
  std::array<double, 6> as_numbers() const {
    return {static_cast<double>(window_step),
            window_time,
            static_cast<double>(window_applications),
            last_rate,
            decided ? 1.0 : 0.0,
            chebyshev_from};
  }
  static AutomaticChoice from_numbers(const std::array<double, 6>& x) {
    return {static_cast<std::int64_t>(x[0]), x[1], static_cast<std::int64_t>(x[2]), x[3], x[4] != 0.0, x[5]};
  }
};

template <class ExecSpace>
class HierarchyState {
 public:
  using vector_type = typename Generator<ExecSpace>::vector_type;

  /// A copy of everything: the ADOs, the time and the integrator's history, so that the copy steps on
  /// as this state would, bit for bit. (The history goes through the host once: where the copy is
  /// acted on at once, with_operator() is cheaper.) Needs a state's memory free (Propagator::make_state).
  HierarchyState(const HierarchyState& other);
  HierarchyState& operator=(const HierarchyState& other);
  HierarchyState(HierarchyState&& other) noexcept = default;
  HierarchyState& operator=(HierarchyState&& other) noexcept;
  ~HierarchyState();

  double time() const { return m_integrator->time(); }
  /// Every ADO at time(), on the device, no copy: this device's ADOs (global indices from the
  /// propagator's first_ado()). Valid until the state changes.
  AdoView<ExecSpace> ados() const;
  /// rho at time() on the host; on a split hierarchy only on the device that holds it.
  Matrix rho() const;
  /// Whether every ADO is Hermitian and stays so (the model keeps ADOs Hermitian): then the
  /// generator's Hermitian form runs.
  InputForm form() const { return m_integrator->input_form(); }
  bool hermitian() const { return form() == InputForm::hermitian; }
  /// The generator kernel its steps run.
  GeneratorKernel kernel() const { return m_parts->generator->kernel(form()); }
  /// Steps, rejections and generator applications so far (they keep counting when the state is set).
  const IntegratorStatistics& statistics() const { return m_integrator->statistics(); }
  /// The method stepping it now (exp-adams or chebyshev where Method::automatic was asked for).
  Method method() const { return m_integrator->method(); }
  /// The method asked for, and for automatic what it chose: "automatic: chebyshev from t = 48.2".
  std::string method_taken() const;
  /// The propagator that made it (a handle on what it holds), which steps it.
  Propagator<ExecSpace> propagator() const { return Propagator<ExecSpace>(m_parts); }

  /// rho(t0) = rho0, every other ADO zero (on every device of a split hierarchy). rho0 must be n x n
  /// (in the ground-column shape, zero outside column 0); it is not checked for positivity. A rho0
  /// that is Hermitian to rounding (1e-14 of its largest element) is replaced by its Hermitian part,
  /// so that a model that preserves Hermiticity runs the generator's faster Hermitian form; any other
  /// (A rho for a correlation function) is propagated as it is, with the general form.
  void set_rho(const Matrix& rho0, double t0 = 0.0);
  /// A batch's states, one rho0 per member (the same rules; the Hermitian form needs every one
  /// Hermitian).
  void set_rhos(const std::vector<Matrix>& rho0, double t0 = 0.0);
  /// Every ADO from [num_ados][n][n] ([num_ados][n][1] in the ground-column shape) at t0, e.g. another
  /// state's (of a propagator of the same hierarchy). The Hermitian form runs when every ADO is
  /// exactly Hermitian. On a split hierarchy each device gives its own ADOs.
  void set_ados(const AdoView<ExecSpace>& ados, double t0);
  /// Multiplies every ADO by `op`, from the left (op x_a) or the right (x_a op): the start of a
  /// correlation function, <A(t) B(0)> = tr[A x(t)] from x(0) = B x. The time stays; the history
  /// restarts. Needs one more state vector for a moment. Ground columns take an operator from the
  /// left alone. One model (not a batch).
  void apply_operator(const Matrix& op, Side side = Side::left);
  /// A new state holding op x (or x op) at this time, this one unchanged: a branch of it.
  HierarchyState with_operator(const Matrix& op, Side side = Side::left) const;
  /// x += scale y, every ADO, for a state y of the same propagator at the same time (a sum of
  /// pathways). The history restarts.
  void add(complex scale, const HierarchyState& y);

  /// The state on the host, for a checkpoint: this device's ADOs, the integrator's history and
  /// step-size controller, and the propagator's fingerprint. With `vectors`, each vector goes there
  /// as it is copied (a file, say), so that no more than one is on the host at once, and the state
  /// returned holds none. One model (not a batch).
  SolverState save(VectorStore* vectors = nullptr) const;
  /// Continues from a saved state, its vectors read from `vectors` (else the state's own): it then
  /// steps on bit for bit as the saved one would have, on a propagator of the same model, depth,
  /// options and build (on a split hierarchy, each device loads the state of its own ADOs). Throws
  /// heom::StateMismatchError naming what differs, heom::Error for a damaged state.
  void load(const SolverState& state, const VectorStore* vectors = nullptr);

  /// The state vector itself (this device's ADOs, then its halo room), for algorithms that work on the
  /// hierarchy in place (the steady state's GMRES). After writing it, call rewritten().
  const vector_type& vector() const { return m_integrator->state(); }
  /// Declares that vector() was rewritten in place, now at time t: its form is found anew (Hermitian
  /// when every ADO is, and the model allows), the history restarts.
  void rewritten(double t);

 private:
  friend class Propagator<ExecSpace>;
  HierarchyState(std::shared_ptr<const impl::PropagatorParts<ExecSpace>> parts);
  /// Method::automatic's choice, made before a step (AutomaticChoice): nothing for other methods,
  /// before the window closes, or once made.
  void choose_method();
  /// A new initial state: automatic's choice starts again from exp-adams (with this state's vector).
  void start_choice_anew();
  /// An integrator of that method for this state (automatic's options otherwise).
  std::unique_ptr<Integrator<ExecSpace>> integrator_for(Method method) const;
  /// Device bytes that the propagator's tables and the states that exist now hold.
  std::uint64_t bytes_held() const;
  /// The integrator's one step towards `limit` (Propagator::step, which chose the limit).
  Integrator<ExecSpace>& integrator() { return *m_integrator; }
  const Integrator<ExecSpace>& integrator() const { return *m_integrator; }
  /// The one check of a state's form: throws, saying `not_hermitian`, where the ADOs are not all
  /// Hermitian (`hermitian` false) and a Hermitian-form kernel was asked for.
  template <class Refusal = Error>
  void require_form(bool hermitian, const char* not_hermitian) const;
  /// Takes on the form of its ADOs (`hermitian`: all Hermitian, which a model that keeps them so may run
  /// the Hermitian form for) and restarts the integrator at t0.
  void restart(double t0, bool hermitian);
  /// Writes each member's rho0 into the zeroed state (the rules of set_rho).
  void write_rhos(const std::vector<Matrix>& rho0, double t0);
  const Generator<ExecSpace>& generator() const { return *m_parts->generator; }
  int dimension() const { return m_parts->model.dimension(); }

  // (In this order: the integrator reads the generator that the parts hold.)
  std::shared_ptr<const impl::PropagatorParts<ExecSpace>> m_parts;
  std::unique_ptr<Integrator<ExecSpace>> m_integrator;
  AutomaticChoice m_choice;
};

#define HEOM_EXTERN_HIERARCHY_STATE(E) extern template class HierarchyState<E>;
HEOM_FOR_EACH_BACKEND(HEOM_EXTERN_HIERARCHY_STATE)
#undef HEOM_EXTERN_HIERARCHY_STATE

/// Whether a state takes rho0 as Hermitian (to rounding: 1e-14 of its largest element), and so may
/// run the generator's Hermitian form from it.
inline bool hermitian_start(const Matrix& rho0) { return !rho0.first_non_hermitian(1e-14); }

}  // namespace heom

#endif
