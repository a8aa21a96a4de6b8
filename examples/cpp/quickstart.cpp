// rimeflake from C++ (include/rimeflake.hpp): RAII, exceptions carrying the status.
#include <cstdio>
#include <iostream>

#include <rimeflake.hpp>

int main() {
  try {
    rimeflake::Generator gen(rimeflake::Config().layout("twitter"));  // embedded default
    std::uint64_t a = gen.next_id(), b = gen.next_id();
    if (!(a < b)) return 1;
    auto batch = gen.next_ids(4096);
    auto parts = gen.layout().decode(b);
    std::cout << "rimeflake " << rimeflake_version() << " (C++): " << b << " (base62 "
              << rimeflake::format(b, "base62") << "): worker " << parts.worker_id
              << ", then " << batch.size() << " more up to " << batch.back() << "\n";
  } catch (const rimeflake::Error &e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}
