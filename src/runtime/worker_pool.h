// A session's worker threads for a batch-split segment that runs on workers
// (engine/batch_split.h): Run(f) calls f(0) on the calling thread and f(1) .. f(helpers)
// on the pool's threads, and returns when every call has. The threads live as long as the
// pool, so each keeps its own OpenMP team between runs (a thread's first parallel region
// starts its team; later ones reuse it).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace switchyard {

class WorkerPool {
 public:
  explicit WorkerPool(int helpers);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int helpers() const { return static_cast<int>(threads_.size()); }
  // f must not throw (the caller catches inside it). Not reentrant: one Run at a time.
  void Run(const std::function<void(int)>& f);

 private:
  void Loop(int worker);
  std::mutex mu_;
  std::condition_variable wake_, done_;
  const std::function<void(int)>* job_ = nullptr;
  uint64_t generation_ = 0;
  int pending_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace switchyard
