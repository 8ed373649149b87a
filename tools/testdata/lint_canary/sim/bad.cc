// A file that breaks every determinism rule once: the lint's canary.
#include <chrono>
#include <random>
#include <unordered_map>
void Bad() {
  auto t = std::chrono::steady_clock::now();
  int r = rand();
  std::mt19937 gen(1);
  std::uniform_int_distribution<int> dist(0, 9);
  std::unordered_map<int, int> m;
  std::unordered_map<int, int> ok;  // determinism-lint: allow (lookup only)
}
sim::Task<void> AlsoBad(Chan<Pair>* c, bool x) {
  co_await c->Send(Pair{1, 2});
  auto v = x ? co_await A() : co_await B();
}
sim::Task<void> AlsoBadLambda(Breaker* b, std::shared_ptr<int> p) {
  co_await b->Run([p]() { return Work(p); });
}
sim::Task<void> AlsoBadCondition(Chan<int>* c) {
  while (co_await c->Recv()) {
  }
}
