// Example: run a Switchyard engine from an application through the public API.
//   switchyard build examples/tiny_cnn/model.onnx --shapes input=1x3x32x32 -o tiny.engine
//   switchyard_example tiny.engine [THREADS]
// Loads the engine once, then runs it from several threads at once on a fixed input and
// checks that every thread got the same answer.
#include <switchyard/engine.h>

#include <cstdio>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s ENGINE [THREADS]\n", argv[0]);
    return 2;
  }
  auto engine = switchyard::EngineRunner::Load(argv[1]);
  if (!engine.ok()) {
    std::fprintf(stderr, "error: %s\n", engine.status().ToString().c_str());
    return 1;
  }
  const auto& runner = *engine;
  std::printf("engine route: '%s'\n", runner->route().c_str());
  // One input per declared input, at its smallest accepted size, filled with a ramp.
  std::map<std::string, switchyard::HostTensor> inputs;
  for (const auto& in : runner->inputs()) {
    std::vector<int64_t> shape;
    for (int64_t d : in.min_shape) shape.push_back(d > 0 ? d : 1);
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    if (in.dtype == "float32") {
      std::vector<float> v(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i % 97) / 97.0f;
      inputs[in.name] = switchyard::HostTensor::FromFloats(shape, v);
    } else if (in.dtype == "int64") {
      inputs[in.name] = switchyard::HostTensor::FromInt64(shape, std::vector<int64_t>(static_cast<size_t>(n), 1));
    } else {
      std::fprintf(stderr, "error: this example feeds float32/int64 inputs; '%s' is %s\n", in.name.c_str(),
                   in.dtype.c_str());
      return 1;
    }
  }
  const int threads = argc > 2 ? std::atoi(argv[2]) : 4;
  std::vector<std::map<std::string, switchyard::HostTensor>> results(static_cast<size_t>(threads));
  std::vector<std::string> errors(static_cast<size_t>(threads));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      auto out = runner->Run(inputs);
      if (out.ok()) results[static_cast<size_t>(t)] = std::move(*out);
      else errors[static_cast<size_t>(t)] = out.status().ToString();
    });
  }
  for (auto& th : pool) th.join();
  for (int t = 0; t < threads; ++t) {
    if (!errors[static_cast<size_t>(t)].empty()) {
      std::fprintf(stderr, "error: thread %d: %s\n", t, errors[static_cast<size_t>(t)].c_str());
      return 1;
    }
    for (const auto& [name, h] : results[static_cast<size_t>(t)]) {
      if (h.data != results[0].at(name).data) {
        std::fprintf(stderr, "error: thread %d got a different '%s'\n", t, name.c_str());
        return 1;
      }
    }
  }
  for (const auto& [name, h] : results[0]) {
    std::printf("%s: %s[", name.c_str(), h.dtype.c_str());
    for (size_t i = 0; i < h.shape.size(); ++i) std::printf("%s%lld", i ? "," : "", static_cast<long long>(h.shape[i]));
    std::printf("]");
    if (const float* f = h.floats()) {
      std::printf(" first values:");
      for (int64_t i = 0; i < std::min<int64_t>(h.numel(), 5); ++i) std::printf(" %.5f", f[i]);
    }
    std::printf("\n");
  }
  std::printf("%d concurrent runs agree\n", threads);
  return 0;
}
