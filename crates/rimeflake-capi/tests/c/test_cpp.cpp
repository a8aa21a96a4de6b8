// C++17 test of include/rimeflake.hpp: RAII, moves, exceptions carrying the status.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <type_traits>
#include <unordered_set>
#include <vector>

#include "rimeflake.hpp"

static int failures = 0;
#define CHECK(cond)                                                          \
  do {                                                                       \
    if (!(cond)) {                                                           \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                            \
    }                                                                        \
  } while (0)

template <typename F>
static rimeflake_status status_of(F f) {
  try {
    f();
  } catch (const rimeflake::Error &e) {
    return e.status();
  }
  return RIMEFLAKE_OK;
}

int main() {
  static_assert(!std::is_copy_constructible_v<rimeflake::Generator>);
  static_assert(std::is_nothrow_move_constructible_v<rimeflake::Generator>);
  static_assert(std::is_base_of_v<std::runtime_error, rimeflake::Error>);

  const char *tmp = std::getenv("TMPDIR");
  std::string base = std::string(tmp ? tmp : "/tmp") + "/rimeflake-cpp-XXXXXX";
  std::vector<char> path(base.begin(), base.end());
  path.push_back('\0');
  CHECK(mkdtemp(path.data()) != nullptr);
  std::string state(path.data());

  rimeflake::Generator gen(rimeflake::Config().layout("twitter").state_dir(state));
  std::uint64_t a = gen.next_id(), b = gen.next_id();
  CHECK(a < b);
  auto ids = gen.next_ids(4096);
  CHECK(ids.size() == 4096 && ids.front() > b);
  CHECK(gen.layout().decode(b).worker_id == gen.worker_id());
  // Generator::decode reads with the generator's own layout: the twitter reading of b (its
  // 2010 epoch), not the default layout's.
  rimeflake::Parts own = gen.decode(b), twitter = rimeflake::Layout("twitter").decode(b);
  CHECK(own.timestamp_ms == twitter.timestamp_ms && own.sequence == twitter.sequence);
  CHECK(own.worker_id == twitter.worker_id && own.has_datacenter_id);
  CHECK(own.timestamp_ms != rimeflake::Layout("default").decode(b).timestamp_ms);
  CHECK(own.sequence == gen.decode(a).sequence + 1 || own.timestamp_ms > gen.decode(a).timestamp_ms);
  auto now_ms = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::system_clock::now().time_since_epoch()).count());
  CHECK(own.timestamp_ms <= now_ms + 1000 && own.timestamp_ms + 60000 > now_ms);
  CHECK(gen.layout().name() == "twitter");
  CHECK(rimeflake::Layout(gen.layout().describe()).name() == "twitter");
  CHECK(rimeflake::Layout(gen.layout().describe()).compose(gen.layout().decode(b)) == b);
  CHECK(gen.stats().ids_issued == 4098);

  // Moves hand the generator over; the moved-from one fails with a status, never crashes.
  rimeflake::Generator moved(std::move(gen));
  CHECK(moved.next_id() > ids.back());
  CHECK(status_of([&] { gen.next_id(); }) == RIMEFLAKE_INVALID_ARGUMENT);

  // Threads share one generator by reference.
  std::vector<std::uint64_t> per[2];
  std::thread t1([&] { per[0] = moved.next_ids(100000); });
  std::thread t2([&] { for (int i = 0; i < 100000; i++) per[1].push_back(moved.next_id()); });
  t1.join();
  t2.join();
  std::unordered_set<std::uint64_t> seen(per[0].begin(), per[0].end());
  seen.insert(per[1].begin(), per[1].end());
  CHECK(seen.size() == 200000);

  // Errors are exceptions with the status and the library's message.
  try {
    rimeflake::Layout bad("nope");
    CHECK(false);
  } catch (const rimeflake::Error &e) {
    CHECK(e.status() == RIMEFLAKE_CONFIG);
    CHECK(std::string(e.what()).find("nope") != std::string::npos);
    CHECK(std::string(e.status_name()) == "RIMEFLAKE_CONFIG");
  }
  CHECK(status_of([] { rimeflake::parse("zz", "dec"); }) == RIMEFLAKE_INVALID_ID);
  CHECK(rimeflake::parse(rimeflake::format(b, "base62"), "base62") == b);
  CHECK(rimeflake::global_id().size() > 34);

  moved.close();
  CHECK(status_of([&] { moved.next_id(); }) == RIMEFLAKE_CLOSED);

  if (failures) {
    std::fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  std::printf("C++ tests: all passed\n");
  return 0;
}
