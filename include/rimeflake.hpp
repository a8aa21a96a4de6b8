// rimeflake.hpp: a header-only C++17 wrapper over the C API of rimeflake.h.
//
//   rimeflake::Generator gen(rimeflake::Config().layout("twitter"));
//   std::uint64_t a = gen.next_id(), b = gen.next_id();   // a < b
//
// Every failure throws rimeflake::Error (a std::runtime_error) carrying the rimeflake_status.
// A Generator is move-only and closes and frees its generator when destroyed; like the C
// generator it may be shared by reference between threads.
#ifndef RIMEFLAKE_HPP
#define RIMEFLAKE_HPP

// C++17 or later (std::optional): said once here rather than as a page of errors
// about std::optional. MSVC reports its /std: level in _MSVC_LANG (__cplusplus stays 199711L
// there unless /Zc:__cplusplus is given).
#if !defined(__cplusplus)
#error "rimeflake.hpp is a C++ header: from C, include rimeflake.h"
#elif (defined(_MSVC_LANG) && _MSVC_LANG < 201703L) || (!defined(_MSVC_LANG) && __cplusplus < 201703L)
#error "rimeflake.hpp needs C++17 or later: compile with -std=c++17 (MSVC: /std:c++17), or use the C API of rimeflake.h"
#else

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "rimeflake.h"

namespace rimeflake {

// A failed call: what() is the library's message, status() the rimeflake_status.
class Error : public std::runtime_error {
 public:
  Error(rimeflake_status status, const std::string &message)
      : std::runtime_error(message), status_(status) {}
  rimeflake_status status() const noexcept { return status_; }
  const char *status_name() const noexcept { return rimeflake_status_name(status_); }

 private:
  rimeflake_status status_;
};

namespace detail {
inline void check(rimeflake_status status) {
  if (status != RIMEFLAKE_OK) {
    throw Error(status, std::string(rimeflake_status_name(status)) + ": " +
                            rimeflake_last_error_message());
  }
}
}  // namespace detail

using Parts = rimeflake_parts;
using Stats = rimeflake_generator_stats;

// How to make a Generator: unset settings are left to the environment and the defaults.
class Config {
 public:
  Config() { detail::check(rimeflake_config_init(&config_)); }
  // <contract:config-setters> generated from the core's tables by `make contract`: do not edit
  Config &layout(std::string v) { return text(layout_, std::move(v)); }
  Config &worker_id(std::uint64_t v) { config_.worker_id = static_cast<std::int64_t>(v); return *this; }
  Config &namespace_name(std::string v) { return text(namespace_name_, std::move(v)); }
  Config &state_dir(std::string v) { return text(state_dir_, std::move(v)); }
  Config &backend(std::string v) { return text(backend_, std::move(v)); }
  Config &max_drift_ms(std::uint64_t v) { config_.max_drift_ms = v; return *this; }
  Config &max_wait_ms(std::uint64_t v) { config_.max_wait_ms = v; return *this; }
  Config &on_rollback(std::string v) { return text(on_rollback_, std::move(v)); }
  Config &strict_monotonic(bool v) { config_.strict_monotonic = v; return *this; }
  Config &lease_ttl_ms(std::uint64_t v) { config_.lease_ttl_ms = v; return *this; }
  Config &random_sequence_start(bool v) { config_.random_sequence_start = v; return *this; }
  Config &wait_at_takeover(bool v) { config_.wait_at_takeover = v; return *this; }
  // </contract:config-setters>
  Config &on_warning(rimeflake_warning_fn f, void *user_data) {
    config_.on_warning = f;
    config_.warning_user_data = user_data;
    return *this;
  }

  // The C config, its text pointing into this object.
  const rimeflake_config *get() {
    // <contract:config-text> generated from the core's tables by `make contract`: do not edit
    config_.layout = c_str(layout_);
    config_.namespace_name = c_str(namespace_name_);
    config_.state_dir = c_str(state_dir_);
    config_.backend = c_str(backend_);
    config_.on_rollback = c_str(on_rollback_);
    // </contract:config-text>
    return &config_;
  }

 private:
  Config &text(std::optional<std::string> &slot, std::string v) {
    slot = std::move(v);
    return *this;
  }
  static const char *c_str(const std::optional<std::string> &s) { return s ? s->c_str() : nullptr; }

  rimeflake_config config_{};
  // <contract:config-text-kept> generated from the core's tables by `make contract`: do not edit
  std::optional<std::string> layout_, namespace_name_, state_dir_, backend_, on_rollback_;
  // </contract:config-text-kept>
};

// A bit layout: a preset name or a layout spec.
class Layout {
 public:
  explicit Layout(const std::string &spec) { detail::check(rimeflake_layout_new(spec.c_str(), &layout_)); }
  explicit Layout(rimeflake_layout *owned) noexcept : layout_(owned) {}
  Layout(Layout &&other) noexcept : layout_(std::exchange(other.layout_, nullptr)) {}
  Layout &operator=(Layout &&other) noexcept {
    std::swap(layout_, other.layout_);
    return *this;
  }
  Layout(const Layout &) = delete;
  Layout &operator=(const Layout &) = delete;
  ~Layout() { rimeflake_layout_free(layout_); }

  Parts decode(std::uint64_t id) const {
    Parts parts{};
    detail::check(rimeflake_decode(layout_, id, &parts));
    return parts;
  }
  std::uint64_t compose(const Parts &parts) const {
    std::uint64_t id = 0;
    detail::check(rimeflake_compose(layout_, &parts, &id));
    return id;
  }
  // The preset's name, or "custom".
  std::string name() const {
    const char *n = nullptr;
    detail::check(rimeflake_layout_name(layout_, &n));
    return n;
  }
  // The layout spec with every field written out; Layout(describe()) is the same layout.
  std::string describe() const {
    char buf[RIMEFLAKE_LAYOUT_DESCRIBE_MAX];
    std::size_t len = 0;
    detail::check(rimeflake_layout_describe(layout_, buf, sizeof buf, &len));
    return std::string(buf, len);
  }
  const rimeflake_layout *get() const noexcept { return layout_; }

 private:
  rimeflake_layout *layout_ = nullptr;
};

// A generator of IDs (move-only); closed and freed when destroyed.
class Generator {
 public:
  Generator() : Generator(Config()) {}
  explicit Generator(Config config) { detail::check(rimeflake_generator_new(config.get(), &gen_)); }
  Generator(Generator &&other) noexcept : gen_(std::exchange(other.gen_, nullptr)) {}
  Generator &operator=(Generator &&other) noexcept {
    std::swap(gen_, other.gen_);
    return *this;
  }
  Generator(const Generator &) = delete;
  Generator &operator=(const Generator &) = delete;
  ~Generator() { rimeflake_generator_free(gen_); }

  std::uint64_t next_id() const {
    std::uint64_t id = 0;
    detail::check(rimeflake_next_id(gen_, &id));
    return id;
  }
  void fill(std::uint64_t *ids, std::size_t n) const { detail::check(rimeflake_fill(gen_, ids, n)); }
  std::vector<std::uint64_t> next_ids(std::size_t n) const {
    std::vector<std::uint64_t> ids(n);
    fill(ids.data(), ids.size());
    return ids;
  }
  Stats stats() const {
    Stats s{};
    detail::check(rimeflake_stats(gen_, &s));
    return s;
  }
  std::uint64_t worker_id() const {
    std::uint64_t w = 0;
    detail::check(rimeflake_generator_worker_id(gen_, &w));
    return w;
  }
  Layout layout() const {
    rimeflake_layout *l = nullptr;
    detail::check(rimeflake_generator_layout(gen_, &l));
    return Layout(l);
  }
  // The parts of `id` read with this generator's layout (a Layout's decode, as Python's and
  // Node's Generator.decode).
  Parts decode(std::uint64_t id) const { return layout().decode(id); }
  void close() const { detail::check(rimeflake_generator_close(gen_)); }
  const rimeflake_generator *get() const noexcept { return gen_; }

 private:
  rimeflake_generator *gen_ = nullptr;
};

// `id` as text: "dec", "hex", "base62" or "base32".
inline std::string format(std::uint64_t id, const std::string &encoding = "dec") {
  char buf[RIMEFLAKE_FORMAT_MAX];
  std::size_t len = 0;
  detail::check(rimeflake_format(id, encoding.c_str(), buf, sizeof buf, &len));
  return std::string(buf, len);
}

// The ID `text` spells in `encoding`.
inline std::uint64_t parse(const std::string &text, const std::string &encoding = "dec") {
  std::uint64_t id = 0;
  detail::check(rimeflake_parse(text.c_str(), encoding.c_str(), &id));
  return id;
}

// A new ID in the SkyWalking agent's GlobalIdGenerator format.
inline std::string global_id() {
  char buf[RIMEFLAKE_GLOBAL_ID_MAX];
  std::size_t len = 0;
  detail::check(rimeflake_global_id(buf, sizeof buf, &len));
  return std::string(buf, len);
}

}  // namespace rimeflake

#endif  // C++17
#endif  // RIMEFLAKE_HPP
