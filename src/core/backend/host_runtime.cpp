// heom::backend's device runtime for builds without a GPU backend (device_runtime.hpp): there are no
// GPUs, and what needs one says so.
#include <string>

#include "heom/core/backend/device_runtime.hpp"
#include "heom/core/error.hpp"

namespace heom::backend {
namespace {
[[noreturn]] void no_gpus(const char* what) {
  throw Error(std::string(what) + ": this heom has no GPU backend (a CUDA build has)");
}
}  // namespace

int visible_gpus() { return 0; }
std::uint64_t gpu_available_memory(int) { return 0; }
void set_current_gpu(int) { no_gpus("set_current_gpu"); }
int current_gpu() { no_gpus("current_gpu"); }
int gpu_of_stream(void*) { no_gpus("gpu_of_stream"); }
std::string copy_between_gpus(void*, const void*, std::size_t) { return "copy_between_gpus: no GPU backend"; }
void* create_stream(int) { no_gpus("create_stream"); }
void destroy_stream(void*) {}
bool enable_peer_access(int, int) { return false; }

struct ExchangeStreams::Handles {};
ExchangeStreams::ExchangeStreams() : m_handles(std::make_unique<Handles>()) {}
ExchangeStreams::~ExchangeStreams() = default;
bool ExchangeStreams::made() const { return false; }
void ExchangeStreams::make(void*) { no_gpus("ExchangeStreams"); }
void ExchangeStreams::use_gpu() const { no_gpus("ExchangeStreams"); }
void ExchangeStreams::record_sends_ready(void*) { no_gpus("ExchangeStreams"); }
void ExchangeStreams::wait_for_sends(const ExchangeStreams&) { no_gpus("ExchangeStreams"); }
void ExchangeStreams::copy(void*, const void*, std::size_t) { no_gpus("ExchangeStreams"); }
void ExchangeStreams::record_received() { no_gpus("ExchangeStreams"); }
void ExchangeStreams::make_wait_for_received(void*, const ExchangeStreams&) const { no_gpus("ExchangeStreams"); }
void ExchangeStreams::synchronize() const {}

}  // namespace heom::backend
