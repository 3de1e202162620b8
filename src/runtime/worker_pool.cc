#include "runtime/worker_pool.h"

namespace switchyard {

WorkerPool::WorkerPool(int helpers) {
  threads_.reserve(static_cast<size_t>(helpers > 0 ? helpers : 0));
  for (int w = 1; w <= helpers; ++w) threads_.emplace_back([this, w] { Loop(w); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WorkerPool::Run(const std::function<void(int)>& f) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_ = &f;
    pending_ = static_cast<int>(threads_.size());
    ++generation_;
  }
  wake_.notify_all();
  f(0);
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [this] { return pending_ == 0; });
  job_ = nullptr;
}

void WorkerPool::Loop(int worker) {
  uint64_t seen = 0;
  for (;;) {
    const std::function<void(int)>* job = nullptr;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      job = job_;
    }
    (*job)(worker);
    bool last = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      last = --pending_ == 0;
    }
    if (last) done_.notify_one();
  }
}

}  // namespace switchyard
