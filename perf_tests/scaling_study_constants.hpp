// The scaling study's assumptions, named once: docs/scaling.md, "Assumptions", gives each one's source.
#ifndef HEOM_PERF_TESTS_SCALING_STUDY_CONSTANTS_HPP
#define HEOM_PERF_TESTS_SCALING_STUDY_CONSTANTS_HPP

#include <string>
#include <vector>

namespace heom::scaling_study {

inline constexpr double hbm_peak_bytes_per_s = 4.8e12;
inline constexpr double hbm_effective_bytes_per_s = 3.5e12;
inline constexpr double fp64_flops_per_s = 50e12;
inline constexpr double fp64_vector_flops_per_s = 25e12;  // the sensitivity case: the vector units, no tensor cores
inline constexpr int generator_vectors_per_step = 2;      // read the ADO once, write its derivative once
inline constexpr int integrator_vectors_per_step = 6;     // exp-adams: y, past derivatives, y_new
inline constexpr int stored_vectors = 8;                  // exp-adams' seven plus a dense-output buffer
inline constexpr int low_storage_vectors = 3;             // lsrk4: y, running increment, stage derivative
inline constexpr double table_bytes_per_exponent = 12.0;  // label, next, prev: one int each
inline constexpr double table_bytes_per_ado = 16.0;       // complex damping
inline constexpr double step_overhead_s = 10e-6;
inline constexpr double device_usable_bytes = 135e9;
inline constexpr int gpus_per_node = 8;

inline constexpr double nvlink_bytes_per_s = 450e9, nvlink_latency_s = 5e-6;
inline constexpr double pcie_staged_bytes_per_s = 25e9, pcie_staged_latency_s = 10e-6;
inline constexpr double infiniband_bytes_per_s = 50e9, infiniband_latency_s = 15e-6;
inline constexpr double shared_memory_mpi_bytes_per_s = 5e9, shared_memory_mpi_latency_s = 1e-6;

/// The part counts every hierarchy is split into.
inline const std::vector<int> part_counts = {2, 4, 8, 16, 32, 64};

/// The CPU calibration: one exp-adams step of FMO depth 5 on the CI kind of machine, on one and on two
/// threads, measured by heom_bench_generator and read from its JSON (scaling_study_calibration.hpp).
struct CpuCalibration {
  double fmo_depth5_step_1thread_s = 0.0;
  double fmo_depth5_step_2threads_s = 0.0;
  std::string file_1thread, file_2threads;  // where they were read, as the JSON's constants cite them
};

struct Constant {
  std::string name;
  double value;
  std::string unit, source;
};

/// Every constant with its unit and source, as the JSON echoes them.
inline std::vector<Constant> constants(const CpuCalibration& cpu) {
  return {
      {"hbm_peak_bytes_per_s", hbm_peak_bytes_per_s, "B/s", "H200 SXM vendor datasheet (4.8 TB/s HBM3e)"},
      {"hbm_effective_bytes_per_s", hbm_effective_bytes_per_s, "B/s",
       "assumption: ~73% of peak, a typical STREAM-like fraction on Hopper"},
      {"fp64_flops_per_s", fp64_flops_per_s, "FLOP/s",
       "assumption: ~75% of the 67 TFLOP/s FP64 tensor-core datasheet figure (batched ZGEMM); conservative for "
       "scaling since faster compute makes communication relatively dearer"},
      {"fp64_vector_flops_per_s", fp64_vector_flops_per_s, "FLOP/s",
       "sensitivity case: ~75% of the 34 TFLOP/s FP64 vector datasheet figure (a Kokkos team kernel)"},
      {"generator_vectors_per_step", generator_vectors_per_step, "vectors", "DESIGN.md section 4: 32 n^2 B/ADO"},
      {"integrator_vectors_per_step", integrator_vectors_per_step, "vectors",
       "assumption: exp-adams order 4-5 streams y, past derivatives and y_new (5-7)"},
      {"stored_vectors", stored_vectors, "vectors", "src/integrator/options.cpp: exp-adams 7 + dense output 1"},
      {"low_storage_vectors", low_storage_vectors, "vectors", "src/integrator/options.cpp: lsrk4"},
      {"table_bytes_per_exponent", table_bytes_per_exponent, "B", "src/hierarchy/memory_plan.cpp"},
      {"table_bytes_per_ado", table_bytes_per_ado, "B", "src/hierarchy/memory_plan.cpp"},
      {"step_overhead_s", step_overhead_s, "s",
       "assumption: ~3 kernel launches and the host's step-size decision (a device-to-host copy) per step"},
      {"device_usable_bytes", device_usable_bytes, "B",
       "141 GB H200 datasheet figure less ~6 GB for CUDA context, Kokkos and fragmentation (assumption)"},
      {"gpus_per_node", gpus_per_node, "GPUs", "HGX H200 vendor datasheet (8 GPUs, NVSwitch)"},
      {"nvlink_bytes_per_s", nvlink_bytes_per_s, "B/s", "vendor datasheet: NVLink 4, 900 GB/s bidirectional"},
      {"nvlink_latency_s", nvlink_latency_s, "s", "assumption: NCCL point-to-point small-message latency"},
      {"pcie_staged_bytes_per_s", pcie_staged_bytes_per_s, "B/s",
       "assumption: PCIe Gen5 x16 (64 GB/s datasheet) device->host->device with pinned buffers"},
      {"pcie_staged_latency_s", pcie_staged_latency_s, "s", "assumption: two cudaMemcpy and an MPI message"},
      {"infiniband_bytes_per_s", infiniband_bytes_per_s, "B/s", "vendor datasheet: InfiniBand NDR 400 Gb/s per GPU"},
      {"infiniband_latency_s", infiniband_latency_s, "s", "assumption: 10-20 us GPU to GPU across nodes"},
      {"shared_memory_mpi_bytes_per_s", shared_memory_mpi_bytes_per_s, "B/s",
       "assumption: one core's copy through MPI shared memory"},
      {"shared_memory_mpi_latency_s", shared_memory_mpi_latency_s, "s", "assumption: intra-node MPI latency"},
      {"cpu_fmo_depth5_step_1thread_s", cpu.fmo_depth5_step_1thread_s, "s",
       "measured: " + cpu.file_1thread + ", BM_Step FMO depth 5 exp-adams"},
      {"cpu_fmo_depth5_step_2threads_s", cpu.fmo_depth5_step_2threads_s, "s",
       "measured: " + cpu.file_2threads + ", BM_Step FMO depth 5 exp-adams"},
  };
}

}  // namespace heom::scaling_study

#endif
