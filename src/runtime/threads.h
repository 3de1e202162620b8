// The calling thread's OpenMP team size for one scope. oneDNN's OpenMP runtime, and every
// `omp parallel` without num_threads, parallelise with omp_get_max_threads() of the calling
// thread; a CPU run holds one for the engine's thread count (Session::Run) and oneDNN
// kernels one for their call (they may run outside a session). Restores the previous value.
#pragma once

#include <omp.h>

namespace switchyard {

class ThreadScope {
 public:
  explicit ThreadScope(int threads) : saved_(omp_get_max_threads()) { omp_set_num_threads(threads > 0 ? threads : 1); }
  ~ThreadScope() { omp_set_num_threads(saved_); }
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;

 private:
  const int saved_;
};

}  // namespace switchyard
