/* C tests of librimeflake: the entry point, the statuses and the checks on arguments.
 * Built with -Wall -Wextra -Werror -std=c99 -pedantic; run plainly and under ASan + UBSan. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

int check_failures = 0;

void make_temp_dir(char *buf, size_t size) {
  const char *base = getenv("TMPDIR");
  snprintf(buf, size, "%s/rimeflake-c-XXXXXX", base && *base ? base : "/tmp");
  if (!mkdtemp(buf)) {
    perror("mkdtemp");
    exit(2);
  }
}

void config_for(rimeflake_config *config, const char *state_dir, const char *layout,
                long worker_id) {
  if (rimeflake_config_init(config) != RIMEFLAKE_OK) {
    fprintf(stderr, "rimeflake_config_init failed\n");
    exit(2);
  }
  config->state_dir = state_dir;
  config->layout = layout;
  config->worker_id = worker_id;
}

static void test_version(void) {
  char want[32];
  snprintf(want, sizeof want, "%d.%d.%d", RIMEFLAKE_VERSION_MAJOR, RIMEFLAKE_VERSION_MINOR,
           RIMEFLAKE_VERSION_PATCH);
  CHECK(strcmp(rimeflake_version(), want) == 0);
  CHECK(strcmp(rimeflake_version(), RIMEFLAKE_VERSION_STRING) == 0);
  CHECK(RIMEFLAKE_VERSION_NUMBER == RIMEFLAKE_VERSION_MAJOR * 1000000 +
                                        RIMEFLAKE_VERSION_MINOR * 1000 + RIMEFLAKE_VERSION_PATCH);
}

/* Every status has its own name, and a value that is none has one too. */
static void test_status_names(void) {
  static const struct {
    rimeflake_status status;
    const char *name;
  } all[] = {
      {RIMEFLAKE_OK, "RIMEFLAKE_OK"},
      {RIMEFLAKE_CONFIG, "RIMEFLAKE_CONFIG"},
      {RIMEFLAKE_CLOCK_ROLLBACK, "RIMEFLAKE_CLOCK_ROLLBACK"},
      {RIMEFLAKE_LEASE, "RIMEFLAKE_LEASE"},
      {RIMEFLAKE_NO_FREE_WORKER, "RIMEFLAKE_NO_FREE_WORKER"},
      {RIMEFLAKE_STATE, "RIMEFLAKE_STATE"},
      {RIMEFLAKE_INVALID_ID, "RIMEFLAKE_INVALID_ID"},
      {RIMEFLAKE_CLOSED, "RIMEFLAKE_CLOSED"},
      {RIMEFLAKE_TIME_RANGE, "RIMEFLAKE_TIME_RANGE"},
      {RIMEFLAKE_OVERLOADED, "RIMEFLAKE_OVERLOADED"},
      {RIMEFLAKE_INTERRUPTED, "RIMEFLAKE_INTERRUPTED"},
      {RIMEFLAKE_INVALID_ARGUMENT, "RIMEFLAKE_INVALID_ARGUMENT"},
      {RIMEFLAKE_BUFFER_TOO_SMALL, "RIMEFLAKE_BUFFER_TOO_SMALL"},
      {RIMEFLAKE_PANIC, "RIMEFLAKE_PANIC"},
      {RIMEFLAKE_ERROR, "RIMEFLAKE_ERROR"},
  };
  size_t i;
  for (i = 0; i < sizeof all / sizeof all[0]; i++) {
    CHECK(strcmp(rimeflake_status_name(all[i].status), all[i].name) == 0);
  }
  CHECK(RIMEFLAKE_OK == 0);
  CHECK(strcmp(rimeflake_status_name(-1), "RIMEFLAKE_UNKNOWN") == 0);
  CHECK(strcmp(rimeflake_status_name(11), "RIMEFLAKE_UNKNOWN") == 0);
}

/* Each status a C program can meet, produced for real (PANIC is produced by the crate's Rust
 * test, ERROR needs an error kind newer than this library, INTERRUPTED an interrupt hook the C
 * API does not have; their names are checked above). LEASE, CLOCK_ROLLBACK: test_fork and
 * test_restart. INVALID_ARGUMENT, BUFFER_TOO_SMALL: test_arguments. */
void test_statuses(const char *self) {
  char dir[256];
  rimeflake_config config;
  rimeflake_generator *gens[9] = {0};
  rimeflake_generator *gen = NULL;
  rimeflake_layout *layout = NULL;
  rimeflake_parts parts = {0, 0, 0, 0, 0, false};
  uint64_t id = 42, *ids;
  int i, fd;
  (void)self;

  /* CONFIG: an unknown preset, an unknown rollback policy, a worker ID out of range. */
  CHECK_STATUS(rimeflake_layout_new("nope", &layout), RIMEFLAKE_CONFIG);
  CHECK(layout == NULL);
  CHECK(strstr(rimeflake_last_error_message(), "nope") != NULL);
  make_temp_dir(dir, sizeof dir);
  config_for(&config, dir, "twitter", -1);
  config.on_rollback = "sideways";
  CHECK_STATUS(rimeflake_generator_new(&config, &gen), RIMEFLAKE_CONFIG);
  config_for(&config, dir, "twitter", 1024);
  CHECK_STATUS(rimeflake_generator_new(&config, &gen), RIMEFLAKE_CONFIG);
  CHECK(gen == NULL);

  /* INVALID_ID and TIME_RANGE. */
  CHECK_STATUS(rimeflake_parse("12a", "dec", &id), RIMEFLAKE_INVALID_ID);
  CHECK(id == 42);
  CHECK_OK(rimeflake_layout_new("default", &layout));
  parts.timestamp_ms = 1000; /* long before 2024 */
  CHECK_STATUS(rimeflake_compose(layout, &parts, &id), RIMEFLAKE_TIME_RANGE);
  CHECK(id == 42);
  rimeflake_layout_free(layout);

  /* CLOSED: every call after close, and close again is harmless. */
  config_for(&config, dir, "twitter", 3);
  CHECK_OK(rimeflake_generator_new(&config, &gen));
  CHECK_OK(rimeflake_next_id(gen, &id));
  CHECK_OK(rimeflake_generator_close(gen));
  CHECK_OK(rimeflake_generator_close(gen));
  id = 42;
  CHECK_STATUS(rimeflake_next_id(gen, &id), RIMEFLAKE_CLOSED);
  CHECK(id == 42);
  CHECK_STATUS(rimeflake_fill(gen, &id, 1), RIMEFLAKE_CLOSED);
  rimeflake_generator_free(gen);

  /* NO_FREE_WORKER: js_safe has 3 worker bits, so 8 workers; a 9th finds none. */
  config_for(&config, dir, "js_safe", -1);
  config.namespace_name = "js";
  for (i = 0; i < 8; i++) {
    CHECK_OK(rimeflake_generator_new(&config, &gens[i]));
  }
  CHECK_STATUS(rimeflake_generator_new(&config, &gens[8]), RIMEFLAKE_NO_FREE_WORKER);
  CHECK(gens[8] == NULL);
  for (i = 0; i < 8; i++) {
    rimeflake_generator_free(gens[i]);
  }

  /* STATE: a corrupt state file is refused, never silently reset. */
  config_for(&config, dir, "twitter", 5);
  config.namespace_name = "corrupt";
  CHECK_OK(rimeflake_generator_new(&config, &gen));
  CHECK_OK(rimeflake_next_id(gen, &id));
  rimeflake_generator_free(gen);
  {
    char path[512];
    snprintf(path, sizeof path, "%s/corrupt/worker-00005.state", dir);
    fd = open(path, O_WRONLY | O_TRUNC);
    CHECK(fd >= 0);
    if (fd >= 0) {
      CHECK(write(fd, "not a state file\n", 17) == 17);
      close(fd);
    }
  }
  gen = NULL;
  CHECK_STATUS(rimeflake_generator_new(&config, &gen), RIMEFLAKE_STATE);
  CHECK(gen == NULL);
  CHECK(strstr(rimeflake_last_error_message(), "worker-00005") != NULL);

  /* OVERLOADED: no lead allowed (max_drift 0) and no wait (max_wait 0): a batch larger than one
   * millisecond's sequence cannot be served. */
  config_for(&config, NULL, "twitter", 6);
  config.backend = "memory";
  config.max_drift_ms = 0;
  config.max_wait_ms = 0;
  CHECK_OK(rimeflake_generator_new(&config, &gen));
  ids = (uint64_t *)malloc(100000 * sizeof *ids);
  CHECK_STATUS(rimeflake_fill(gen, ids, 100000), RIMEFLAKE_OVERLOADED);
  free(ids);
  rimeflake_generator_free(gen);
}

static void test_config_size(void) {
  char dir[256];
  rimeflake_generator *gen = NULL;
  /* A config with room for fields of a newer header: unset, they are fine; set, refused. */
  union {
    rimeflake_config config;
    unsigned char bytes[sizeof(rimeflake_config) + 16];
  } bigger;
  rimeflake_config config;
  make_temp_dir(dir, sizeof dir);
  memset(&bigger, 0xAB, sizeof bigger);
  CHECK_OK(rimeflake_config_init_sized(&bigger.config, sizeof bigger));
  CHECK(bigger.config.struct_size == sizeof bigger);
  CHECK(bigger.bytes[sizeof(rimeflake_config) + 3] == 0);
  bigger.config.state_dir = dir;
  CHECK_OK(rimeflake_generator_new(&bigger.config, &gen));
  rimeflake_generator_free(gen);
  gen = NULL;
  bigger.bytes[sizeof(rimeflake_config) + 3] = 1;
  CHECK_STATUS(rimeflake_generator_new(&bigger.config, &gen), RIMEFLAKE_INVALID_ARGUMENT);
  CHECK(gen == NULL);
  /* An older header's smaller struct (the one before lease_ttl_ms): read up to its size, the
   * rest defaulted, even where the caller's memory past it holds anything. */
  size_t older = offsetof(rimeflake_config, lease_ttl_ms);
  memset(&config, 0xAB, sizeof config);
  CHECK_OK(rimeflake_config_init_sized(&config, older));
  CHECK(config.struct_size == older && config.worker_id == -1 && config.max_wait_ms == 5000);
  CHECK(((unsigned char *)&config)[older] == 0xAB); /* nothing written past its size */
  config.state_dir = dir;
  CHECK_OK(rimeflake_generator_new(&config, &gen));
  rimeflake_generator_free(gen);
  gen = NULL;
  /* Smaller than any header's, or never initialised. */
  config_for(&config, dir, NULL, -1);
  config.struct_size = older - 8;
  CHECK_STATUS(rimeflake_generator_new(&config, &gen), RIMEFLAKE_INVALID_ARGUMENT);
  CHECK_STATUS(rimeflake_config_init_sized(&config, 8), RIMEFLAKE_INVALID_ARGUMENT);
}

/* rimeflake_config_init + rimeflake_generator_new alone work: the environment and the
 * defaults decide the rest, as in every front end. */
static void test_defaults(void) {
  char dir[256];
  rimeflake_config config;
  rimeflake_generator *gen = NULL;
  rimeflake_generator_stats stats;
  uint64_t a = 0, b = 0, worker = 99;
  make_temp_dir(dir, sizeof dir);
  setenv("RIMEFLAKE_STATE_DIR", dir, 1);
  CHECK_OK(rimeflake_config_init(&config));
  CHECK(config.struct_size == sizeof config);
  CHECK(config.worker_id == -1 && config.layout == NULL && config.max_drift_ms == 2000);
  CHECK_OK(rimeflake_generator_new(&config, &gen));
  CHECK_OK(rimeflake_next_id(gen, &a));
  CHECK_OK(rimeflake_next_id(gen, &b));
  CHECK(a < b);
  CHECK_OK(rimeflake_generator_worker_id(gen, &worker));
  CHECK(worker == 0);
  CHECK_OK(rimeflake_stats(gen, &stats));
  CHECK(stats.ids_issued == 2);
  /* A state directory: written at start at least; no server lease. */
  CHECK(stats.reservation_writes >= 1 && stats.reservation_write_failures == 0);
  CHECK(stats.reservation_write_ns > 0);
  CHECK(stats.lease_state == RIMEFLAKE_LEASE_NONE && stats.lease_renewals == 0);
  rimeflake_generator_free(gen);
  gen = NULL;
  CHECK_OK(rimeflake_generator_new(NULL, &gen));
  CHECK_OK(rimeflake_next_id(gen, &a));
  CHECK(a > b); /* the restart continues above the first generator's IDs */
  rimeflake_generator_free(gen);

  /* The environment decides what the config leaves unset; a bad value names its variable. */
  setenv("RIMEFLAKE_WORKER_ID", "7", 1);
  setenv("RIMEFLAKE_LAYOUT", "sonyflake", 1);
  CHECK_OK(rimeflake_generator_new(NULL, &gen));
  CHECK_OK(rimeflake_generator_worker_id(gen, &worker));
  CHECK(worker == 7);
  {
    rimeflake_layout *layout = NULL;
    const char *name = NULL;
    CHECK_OK(rimeflake_generator_layout(gen, &layout));
    CHECK_OK(rimeflake_layout_name(layout, &name));
    CHECK(name && strcmp(name, "sonyflake") == 0);
    rimeflake_layout_free(layout);
  }
  rimeflake_generator_free(gen);
  gen = NULL;
  setenv("RIMEFLAKE_WORKER_ID", "seven", 1);
  CHECK_STATUS(rimeflake_generator_new(NULL, &gen), RIMEFLAKE_CONFIG);
  CHECK(strstr(rimeflake_last_error_message(), "RIMEFLAKE_WORKER_ID") != NULL);
  CHECK(gen == NULL);
  /* What the config sets wins over the environment. */
  config_for(&config, dir, "twitter", 3);
  CHECK_OK(rimeflake_generator_new(&config, &gen));
  CHECK_OK(rimeflake_generator_worker_id(gen, &worker));
  CHECK(worker == 3);
  rimeflake_generator_free(gen);
  unsetenv("RIMEFLAKE_WORKER_ID");
  unsetenv("RIMEFLAKE_LAYOUT");
  unsetenv("RIMEFLAKE_STATE_DIR");
}

struct warnings_seen {
  int count;
  char kind[64];
};

static void on_warning(void *user_data, const char *kind, const char *message) {
  struct warnings_seen *seen = (struct warnings_seen *)user_data;
  seen->count++;
  snprintf(seen->kind, sizeof seen->kind, "%s", kind);
  CHECK(message != NULL && strlen(message) > 0);
}

/* The core's warnings reach the C callback, with the caller's user data. The one warning the
 * core has now is about a container's default state directory, so it fires only in one. */
static void test_warnings(void) {
  char dir[256];
  rimeflake_config config;
  rimeflake_generator *gen = NULL;
  struct warnings_seen seen = {0, ""};
  int in_container = access("/.dockerenv", F_OK) == 0 || access("/run/.containerenv", F_OK) == 0;
  make_temp_dir(dir, sizeof dir);
  setenv("XDG_STATE_HOME", dir, 1); /* the default state directory, under a fresh one */
  unsetenv("RIMEFLAKE_STATE_DIR");
  unsetenv("RIMEFLAKE_NO_CONTAINER_WARNING");
  CHECK_OK(rimeflake_config_init(&config));
  config.on_warning = on_warning;
  config.warning_user_data = &seen;
  CHECK_OK(rimeflake_generator_new(&config, &gen));
  rimeflake_generator_free(gen);
  if (in_container) {
    CHECK(seen.count == 1);
  }
  if (seen.count) {
    CHECK(strcmp(seen.kind, "container") == 0);
  }
  unsetenv("XDG_STATE_HOME");
}

static void test_global_id(void) {
  char a[RIMEFLAKE_GLOBAL_ID_MAX], b[RIMEFLAKE_GLOBAL_ID_MAX];
  size_t len = 0;
  CHECK_OK(rimeflake_global_id(a, sizeof a, &len));
  CHECK(len == strlen(a) && len > 34 && a[32] == '.');
  CHECK_OK(rimeflake_global_id(b, sizeof b, NULL));
  CHECK(strcmp(a, b) != 0);
}

/* A backend URL: worker IDs leased from a real Redis, whose URL scripts/with-redis puts in
 * RIMEFLAKE_TEST_REDIS_URL (make test-c runs the tests under it). */
static void test_backend(void) {
  const char *url = getenv("RIMEFLAKE_TEST_REDIS_URL");
  if (!url || !*url) {
    fprintf(stderr, "RIMEFLAKE_TEST_REDIS_URL is not set: run `make test-c` (it starts "
                    "redis-server) or the tests under scripts/with-redis\n");
    check_failures++;
    return;
  }
  rimeflake_config config;
  config_for(&config, NULL, NULL, -1);
  config.backend = url;
  config.namespace_name = "c-many";
  rimeflake_generator *a = NULL, *b = NULL, *c = NULL;
  CHECK_OK(rimeflake_generator_new(&config, &a));
  CHECK_OK(rimeflake_generator_new(&config, &b));
  uint64_t wa = 0, wb = 0, x = 0, y = 0;
  CHECK_OK(rimeflake_generator_worker_id(a, &wa));
  CHECK_OK(rimeflake_generator_worker_id(b, &wb));
  CHECK(wa != wb);
  rimeflake_generator_stats stats;
  CHECK_OK(rimeflake_stats(a, &stats));
  CHECK(stats.server_skew_ms > -1000 && stats.server_skew_ms < 1000); /* a server on this host */
  CHECK(stats.lease_state == RIMEFLAKE_LEASE_HELD && stats.lease_remaining_ms > 0);
  /* A short TTL: renewals come a few times a second. */
  {
    rimeflake_config quick = config;
    quick.namespace_name = "c-renew";
    quick.lease_ttl_ms = 1000;
    rimeflake_generator *r = NULL;
    CHECK_OK(rimeflake_generator_new(&quick, &r));
    rimeflake_generator_stats rs;
    memset(&rs, 0, sizeof rs);
    for (int i = 0; i < 600 && rs.lease_renewals < 1; i++) {
      CHECK_OK(rimeflake_stats(r, &rs));
      struct timespec pause = {0, 50 * 1000 * 1000};
      nanosleep(&pause, NULL);
    }
    CHECK(rs.lease_renewals >= 1 && rs.lease_renewal_failures == 0);
    CHECK(rs.lease_state == RIMEFLAKE_LEASE_HELD && rs.lease_remaining_ms <= 1000);
    rimeflake_generator_free(r);
  }
  CHECK_OK(rimeflake_next_id(a, &x));
  CHECK_OK(rimeflake_next_id(b, &y));
  CHECK(x != y);
  /* fork(): the child's first ID takes a worker ID of its own, and freeing the inherited
   * generator there leaves the parent's lease alone. */
  int fds[2];
  CHECK(pipe(fds) == 0);
  pid_t pid = fork();
  if (pid == 0) {
    uint64_t id = 0, worker = 0;
    int ok = rimeflake_next_id(a, &id) == RIMEFLAKE_OK &&
             rimeflake_generator_worker_id(a, &worker) == RIMEFLAKE_OK;
    rimeflake_generator_free(a);
    uint64_t out[2] = {ok ? worker : UINT64_MAX, id};
    _exit(write(fds[1], out, sizeof out) == (ssize_t)sizeof out ? 0 : 1);
  }
  close(fds[1]);
  uint64_t child[2] = {UINT64_MAX, 0};
  CHECK(read(fds[0], child, sizeof child) == (ssize_t)sizeof child);
  close(fds[0]);
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK(child[0] != UINT64_MAX && child[0] != wa && child[0] != wb);
  CHECK(child[1] != x && child[1] != y);
  uint64_t after = 0;
  CHECK_OK(rimeflake_next_id(a, &after));
  CHECK(after > x);
  /* A worker ID held by another generator is a lease error (the parent's, after the fork). */
  config.worker_id = (int64_t)wa;
  CHECK_STATUS(rimeflake_generator_new(&config, &c), RIMEFLAKE_LEASE);
  CHECK(strstr(rimeflake_last_error_message(), "held") != NULL);
  rimeflake_generator_free(a);
  /* Freed: the worker ID is free again, and its state went on from where it was. */
  CHECK_OK(rimeflake_generator_new(&config, &c));
  uint64_t z = 0;
  CHECK_OK(rimeflake_next_id(c, &z));
  CHECK(z > x);
  rimeflake_generator_free(b);
  rimeflake_generator_free(c);
  /* A URL's password never shows in a message. */
  config.backend = "redis://:s3cret@127.0.0.1:notaport/0";
  CHECK_STATUS(rimeflake_generator_new(&config, &c), RIMEFLAKE_CONFIG);
  CHECK(strstr(rimeflake_last_error_message(), "s3cret") == NULL);
  /* MySQL and ZooKeeper are built in: a server that is not there (port 1) is a lease error
     naming it, not a missing feature. */
  const char *absent[] = {"mysql://app:s3cret@127.0.0.1:1/ids",
                          "zookeeper://app:s3cret@127.0.0.1:1/ids"};
  for (size_t i = 0; i < 2; i++) {
    config.backend = absent[i];
    CHECK_STATUS(rimeflake_generator_new(&config, &c), RIMEFLAKE_LEASE);
    CHECK(strstr(rimeflake_last_error_message(), "127.0.0.1:1") != NULL);
    CHECK(strstr(rimeflake_last_error_message(), "s3cret") == NULL);
  }

  /* TLS: the server's certificate is checked against the URL's sslrootcert=. */
  const char *tls_url = getenv("RIMEFLAKE_TEST_REDISS_URL");
  if (!tls_url || !*tls_url) {
    fprintf(stderr, "RIMEFLAKE_TEST_REDISS_URL is not set: run the tests under scripts/with-redis\n");
    check_failures++;
    return;
  }
  /* A lease TTL out of range is refused; one in range is taken. */
  c = NULL;
  config.backend = url;
  config.worker_id = -1;
  config.namespace_name = "c-ttl";
  config.lease_ttl_ms = 100;
  CHECK_STATUS(rimeflake_generator_new(&config, &c), RIMEFLAKE_CONFIG);
  CHECK(strstr(rimeflake_last_error_message(), "lease_ttl") != NULL);
  config.lease_ttl_ms = 500;
  CHECK_OK(rimeflake_generator_new(&config, &c));
  CHECK_OK(rimeflake_next_id(c, &z));
  rimeflake_generator_free(c);
  c = NULL;
  config.lease_ttl_ms = 0;
  config.namespace_name = "c-tls";
  config.backend = tls_url;
  CHECK_OK(rimeflake_generator_new(&config, &c));
  CHECK_OK(rimeflake_next_id(c, &z));
  rimeflake_generator_free(c);
  /* Without the test CA, the system's CAs do not vouch for the server. */
  char untrusted[512];
  snprintf(untrusted, sizeof untrusted, "%s", tls_url);
  char *query = strchr(untrusted, '?');
  CHECK(query != NULL);
  if (query) {
    *query = '\0';
  }
  config.backend = untrusted;
  CHECK_STATUS(rimeflake_generator_new(&config, &c), RIMEFLAKE_CONFIG);
  CHECK(strstr(rimeflake_last_error_message(), "not trusted") != NULL);
}

int main(int argc, char **argv) {
  int mode = child_mode(argc, argv);
  if (mode >= 0) {
    return mode;
  }
  test_version();
  test_status_names();
  test_statuses(argv[0]);
  test_config_size();
  test_defaults();
  test_global_id();
  test_warnings();
  test_arguments();
  test_vectors();
  test_threads();
  test_fork();
  test_restart(argv[0]);
  test_backend();
  test_sequence_start();
  test_warnings_on_stderr();
  if (check_failures) {
    fprintf(stderr, "%d check(s) failed\n", check_failures);
    return 1;
  }
  printf("C tests: all passed\n");
  return 0;
}
