// Which of the generator's kernels may run for a model on a backend, and which one `automatic` runs:
// one table, read by Generator::kernel, the checks of an asked-for kernel, and the halo's row lists.
#ifndef HEOM_GENERATOR_KERNEL_CHOICE_HPP
#define HEOM_GENERATOR_KERNEL_CHOICE_HPP

#include <string>

#include "heom/generator/options.hpp"

namespace heom {

/// What decides which kernels may run: the backend (BackendTraits) and the model.
struct KernelContext {
  bool host_shape = true;          ///< BackendTraits::host_shape: one thread per ADO
  bool two_level_backend = false;  ///< BackendTraits::two_level_kernel: the AVX-512 forms are built
  int n = 0;                       ///< the system's dimension
  bool preserves_hermiticity = false;
  bool fermionic = false;  ///< a fermionic bath
};

namespace impl {

/// One kernel's row: when it may run (asked for by name, or chosen), and when `automatic` chooses it.
struct KernelRule {
  GeneratorKernel kernel;
  bool host_shape_only;         ///< a whole block per thread: host backends alone
  bool two_level_backend_only;  ///< the AVX-512 forms
  int min_n, max_n;             ///< the dimensions it computes (0: any)
  bool hermitian_model_only;    ///< a Hermitian form: the model must keep ADOs Hermitian
  bool bosonic_only;
  /// automatic chooses it (the first row, in this order, that may run and whose conditions hold)
  /// only for Hermitian input, only on the device shape, and from this dimension on.
  bool automatic_hermitian_input_only;
  bool automatic_device_shape_only;
  int automatic_min_n;
};

/// The largest n the host-block kernel computes (its local arrays' bound: a block of 16 KiB).
inline constexpr int host_block_max_n = 32;

/// The kernels in the order automatic tries them: the fastest first where each may run (measured:
/// perf_tests/history.md). At n = 2 mirroring a block costs more than the half it saves, so the
/// Hermitian host form starts at n = 3; beyond n = 8 host backends run the general form with the
/// dimension known at run time (HostBlockKernel's N = 0).
inline constexpr KernelRule kernel_rules[] = {
    {GeneratorKernel::two_level, false, true, 2, 2, false, true, false, false, 0},
    {GeneratorKernel::hermitian, true, false, 2, 8, true, false, true, false, 3},
    {GeneratorKernel::host_block, true, false, 2, host_block_max_n, false, false, false, false, 0},
    {GeneratorKernel::portable_hermitian, false, false, 0, 0, true, false, true, true, 0},
    {GeneratorKernel::portable, false, false, 0, 0, false, false, false, false, 0},
};

/// Why `kernel` cannot run in `context` ("" where it can). ground_column is the shape's kernel:
/// GeneratorOptions::shape chooses it, so as a name it runs nowhere.
inline std::string kernel_obstacle(GeneratorKernel kernel, const KernelContext& context) {
  if (kernel == GeneratorKernel::automatic) return "";
  for (const KernelRule& rule : kernel_rules) {
    if (rule.kernel != kernel) continue;
    if ((rule.host_shape_only && !context.host_shape) || (rule.two_level_backend_only && !context.two_level_backend))
      return "this backend does not run it";
    if ((rule.min_n > 0 && context.n < rule.min_n) || (rule.max_n > 0 && context.n > rule.max_n))
      return "it computes n = " + std::to_string(rule.min_n) +
             (rule.max_n > rule.min_n ? ".." + std::to_string(rule.max_n) : std::string());
    if (rule.hermitian_model_only && !context.preserves_hermiticity) return "the model does not keep ADOs Hermitian";
    if (rule.bosonic_only && context.fermionic)
      return "it computes bosonic baths alone, and this model has a fermionic one";
    return "";
  }
  return "it is the ground-column shape's kernel (GeneratorOptions::shape)";
}

/// The kernel `automatic` runs in `context` for input of that form.
inline GeneratorKernel automatic_kernel(const KernelContext& context, InputForm form) {
  for (const KernelRule& rule : kernel_rules) {
    if (!kernel_obstacle(rule.kernel, context).empty()) continue;
    if (rule.automatic_hermitian_input_only && form != InputForm::hermitian) continue;
    if (rule.automatic_device_shape_only && context.host_shape) continue;
    if (context.n < rule.automatic_min_n) continue;
    return rule.kernel;
  }
  return GeneratorKernel::portable;
}

/// The kernel apply() runs when `requested` was asked for (square blocks), for input of that form.
inline GeneratorKernel chosen_kernel(GeneratorKernel requested, const KernelContext& context, InputForm form) {
  return requested == GeneratorKernel::automatic ? automatic_kernel(context, form) : requested;
}

}  // namespace impl
}  // namespace heom

#endif
