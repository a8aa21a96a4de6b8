/* Threads, fork(), kill -9 and a clock set back, with real processes and real state files. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Sorts both arrays; 1 when they share no value and neither repeats one. */
static int disjoint_and_unique(uint64_t *a, size_t na, uint64_t *b, size_t nb) {
  size_t i = 0, j = 0;
  if (na) qsort(a, na, sizeof *a, cmp_u64);
  if (nb) qsort(b, nb, sizeof *b, cmp_u64);
  for (i = 1; i < na; i++) {
    if (a[i - 1] == a[i]) return 0;
  }
  for (j = 1; j < nb; j++) {
    if (b[j - 1] == b[j]) return 0;
  }
  for (i = 0, j = 0; i < na && j < nb;) {
    if (a[i] == b[j]) return 0;
    if (a[i] < b[j]) i++; else j++;
  }
  return 1;
}

/* ---- 4 threads x 1,000,000 IDs on one generator -------------------------------------------- */

#define THREADS 4
#define PER_THREAD 1000000

struct worker_arg {
  const rimeflake_generator *gen;
  uint64_t *ids;
  int failed;
};

static void *thread_main(void *p) {
  struct worker_arg *arg = (struct worker_arg *)p;
  size_t i;
  for (i = 0; i < PER_THREAD; i++) {
    if (rimeflake_next_id(arg->gen, &arg->ids[i]) != RIMEFLAKE_OK) {
      arg->failed = 1;
      return NULL;
    }
    if (i > 0 && arg->ids[i] <= arg->ids[i - 1]) { /* each thread sees them increase */
      arg->failed = 2;
    }
  }
  return NULL;
}

void test_threads(void) {
  char dir[256];
  rimeflake_config config;
  rimeflake_generator *gen = NULL;
  rimeflake_generator_stats stats;
  uint64_t *ids = (uint64_t *)malloc((size_t)THREADS * PER_THREAD * sizeof *ids);
  pthread_t threads[THREADS];
  struct worker_arg args[THREADS];
  size_t i;
  make_temp_dir(dir, sizeof dir);
  config_for(&config, dir, "twitter", -1);
  CHECK_OK(rimeflake_generator_new(&config, &gen));
  for (i = 0; i < THREADS; i++) {
    args[i].gen = gen;
    args[i].ids = ids + i * PER_THREAD;
    args[i].failed = 0;
    CHECK(pthread_create(&threads[i], NULL, thread_main, &args[i]) == 0);
  }
  for (i = 0; i < THREADS; i++) {
    pthread_join(threads[i], NULL);
    CHECK(args[i].failed == 0);
  }
  CHECK_OK(rimeflake_stats(gen, &stats));
  CHECK(stats.ids_issued == (uint64_t)THREADS * PER_THREAD);
  CHECK(disjoint_and_unique(ids, (size_t)THREADS * PER_THREAD, NULL, 0));
  rimeflake_generator_free(gen);
  free(ids);
}

/* ---- fork(): the child's IDs never collide with the parent's ------------------------------- */

#define FORK_IDS 200000

static int read_all(int fd, void *buf, size_t size) {
  size_t got = 0;
  while (got < size) {
    ssize_t n = read(fd, (char *)buf + got, size - got);
    if (n <= 0) return 0;
    got += (size_t)n;
  }
  return 1;
}

static int write_all(int fd, const void *buf, size_t size) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = write(fd, (const char *)buf + done, size - done);
    if (n <= 0) return 0;
    done += (size_t)n;
  }
  return 1;
}

/* In the forked child: IDs from the inherited generators, sent to the parent. Exit codes name
 * what went wrong. */
static int forked_child(int fd, rimeflake_generator *leased, rimeflake_generator *fixed,
                        rimeflake_generator *closed, uint64_t parent_worker) {
  uint64_t *ids = (uint64_t *)malloc(FORK_IDS * sizeof *ids);
  uint64_t id = 0, worker = parent_worker;
  uint64_t before_first = parent_worker;
  rimeflake_status s;
  /* Before the child's first ID, the worker ID is already the child's own (taken now), and
   * the one its IDs then carry; a fixed worker ID cannot move, so the child has none. */
  if (rimeflake_generator_worker_id(leased, &before_first) != RIMEFLAKE_OK) return 17;
  if (before_first == parent_worker) return 18;
  if (rimeflake_generator_worker_id(fixed, &worker) != RIMEFLAKE_LEASE) return 19;
  if (rimeflake_generator_worker_id(closed, &worker) != RIMEFLAKE_CLOSED) return 20;
  worker = parent_worker;
  if ((s = rimeflake_next_id(fixed, &id)) != RIMEFLAKE_LEASE) return 10;
  if ((s = rimeflake_next_id(closed, &id)) != RIMEFLAKE_CLOSED) {
    fprintf(stderr, "child: closed generator gave %s: %s\n", rimeflake_status_name(s),
            rimeflake_last_error_message());
    return 11;
  }
  if (rimeflake_next_id(leased, &ids[0]) != RIMEFLAKE_OK) return 12;
  if (rimeflake_fill(leased, ids + 1, FORK_IDS - 1) != RIMEFLAKE_OK) return 13;
  if (rimeflake_generator_worker_id(leased, &worker) != RIMEFLAKE_OK) return 14;
  if (worker != before_first) return 15;
  if (!write_all(fd, ids, FORK_IDS * sizeof *ids)) return 16;
  rimeflake_generator_free(leased);
  rimeflake_generator_free(fixed);
  rimeflake_generator_free(closed);
  free(ids);
  return 0;
}

void test_fork(void) {
  char dir[256];
  rimeflake_config config;
  rimeflake_generator *leased = NULL, *fixed = NULL, *closed = NULL;
  uint64_t *mine = (uint64_t *)malloc(FORK_IDS * sizeof *mine);
  uint64_t *theirs = (uint64_t *)malloc(FORK_IDS * sizeof *theirs);
  uint64_t worker = 0, id = 0;
  int fds[2], status = 0;
  pid_t pid;
  make_temp_dir(dir, sizeof dir);
  config_for(&config, dir, "twitter", -1);
  CHECK_OK(rimeflake_generator_new(&config, &leased));
  CHECK_OK(rimeflake_next_id(leased, &id));
  CHECK_OK(rimeflake_generator_worker_id(leased, &worker));
  config_for(&config, dir, "twitter", 77);
  CHECK_OK(rimeflake_generator_new(&config, &fixed));
  CHECK_OK(rimeflake_next_id(fixed, &id));
  config_for(&config, dir, "twitter", -1);
  CHECK_OK(rimeflake_generator_new(&config, &closed));
  CHECK_OK(rimeflake_generator_close(closed));
  CHECK(pipe(fds) == 0);
  fflush(NULL);
  pid = fork();
  if (pid == 0) {
    close(fds[0]);
    _exit(forked_child(fds[1], leased, fixed, closed, worker));
  }
  close(fds[1]);
  /* The parent goes on at the same time, with the same generator. */
  CHECK_OK(rimeflake_fill(leased, mine, FORK_IDS));
  CHECK(read_all(fds[0], theirs, FORK_IDS * sizeof *theirs));
  close(fds[0]);
  CHECK(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "forked child: status %d\n", status);
  }
  CHECK(disjoint_and_unique(mine, FORK_IDS, theirs, FORK_IDS));
  /* The parent's generators are untouched by the child's exit. */
  CHECK_OK(rimeflake_next_id(leased, &id));
  CHECK_OK(rimeflake_next_id(fixed, &id));
  rimeflake_generator_free(leased);
  rimeflake_generator_free(fixed);
  rimeflake_generator_free(closed);
  free(mine);
  free(theirs);
}

/* ---- kill -9, then a restart; then a restart with the clock set back ----------------------- */

#define BATCH 1000

/* child-writer DIR: IDs of worker 9 written to stdout in batches, until killed. */
static int child_writer(const char *dir) {
  rimeflake_config config;
  rimeflake_generator *gen = NULL;
  uint64_t ids[BATCH];
  config_for(&config, dir, "twitter", 9);
  if (rimeflake_generator_new(&config, &gen) != RIMEFLAKE_OK) return 20;
  for (;;) {
    if (rimeflake_fill(gen, ids, BATCH) != RIMEFLAKE_OK) return 21;
    if (!write_all(1, ids, sizeof ids)) return 22;
  }
}

/* child-rollback DIR: run with the clock a day back (libfaketime): the restart must refuse, not
 * repeat. */
static int child_rollback(const char *dir) {
  rimeflake_config config;
  rimeflake_generator *gen = NULL;
  uint64_t id = 0;
  rimeflake_status s;
  config_for(&config, dir, "twitter", 9);
  config.on_rollback = "error";
  s = rimeflake_generator_new(&config, &gen);
  if (s == RIMEFLAKE_OK) {
    s = rimeflake_next_id(gen, &id);
  }
  rimeflake_generator_free(gen);
  if (s != RIMEFLAKE_CLOCK_ROLLBACK) {
    fprintf(stderr, "child-rollback: %s (%s), id %llu\n", rimeflake_status_name(s),
            rimeflake_last_error_message(), (unsigned long long)id);
    return 30;
  }
  return 0;
}

/* child-bump DIR: with the clock a day back (libfaketime), the default layout (clock-id bits)
 * moves to another clock-id; its IDs go to stdout. */
static int child_bump(const char *dir) {
  rimeflake_config config;
  rimeflake_generator *gen = NULL;
  rimeflake_generator_stats stats;
  uint64_t ids[BATCH];
  config_for(&config, dir, "default", 4);
  if (rimeflake_generator_new(&config, &gen) != RIMEFLAKE_OK) return 40;
  if (rimeflake_fill(gen, ids, BATCH) != RIMEFLAKE_OK) return 41;
  if (rimeflake_stats(gen, &stats) != RIMEFLAKE_OK || stats.clock_id == 0) return 42;
  if (!write_all(1, ids, sizeof ids)) return 43;
  rimeflake_generator_free(gen);
  return 0;
}

int child_mode(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "child-writer") == 0) return child_writer(argv[2]);
  if (argc == 3 && strcmp(argv[1], "child-rollback") == 0) return child_rollback(argv[2]);
  if (argc == 3 && strcmp(argv[1], "child-bump") == 0) return child_bump(argv[2]);
  return -1;
}

/* libfaketime's library: $FAKETIME_LIB, else where Debian's faketime package puts it. The
 * library is preloaded directly, not through the `faketime` wrapper: the wrapper names a POSIX
 * semaphore after its own pid and fails when a stale one of that name is left in /dev/shm. */
static const char *libfaketime(void) {
  static char path[512];
  static const char *dirs[] = {"/usr/lib/x86_64-linux-gnu/faketime",
                               "/usr/lib/aarch64-linux-gnu/faketime", "/usr/lib/faketime",
                               "/usr/local/lib/faketime", "/usr/lib64/faketime"};
  static const char *names[] = {"libfaketimeMT.so.1", "libfaketime.so.1"};
  const char *env = getenv("FAKETIME_LIB");
  size_t d, n;
  if (env && *env) return env;
  for (d = 0; d < sizeof dirs / sizeof *dirs; d++) {
    for (n = 0; n < sizeof names / sizeof *names; n++) {
      snprintf(path, sizeof path, "%s/%s", dirs[d], names[n]);
      if (access(path, R_OK) == 0) return path;
    }
  }
  return NULL;
}

/* In a forked child: exec `self mode dir` with the wall clock a day back (the monotonic clock
 * is left alone, as the Rust and Node process tests do). Never returns. */
static void exec_a_day_back(const char *self, const char *mode, const char *dir) {
  const char *lib = libfaketime();
  if (!lib) {
    fprintf(stderr, "libfaketime is missing: install Debian's faketime package, or set "
                    "FAKETIME_LIB\n");
    _exit(127);
  }
  setenv("LD_PRELOAD", lib, 1);
  setenv("FAKETIME", "-86400", 1);
  setenv("FAKETIME_DONT_FAKE_MONOTONIC", "1", 1);
  /* libfaketime is preloaded after the sanitizer runtime: tell ASan that is fine. */
  setenv("ASAN_OPTIONS", "verify_asan_link_order=0", 1);
  execl(self, self, mode, dir, (char *)NULL);
  perror(self);
  _exit(127);
}

/* A restart with the clock a day back, on a layout with clock-id bits: it goes on, on another
 * clock-id, and none of its IDs is one issued before (all sort above them). */
static void restart_with_clock_back(const char *self, const char *dir) {
  rimeflake_config config;
  rimeflake_generator *gen = NULL;
  uint64_t before[BATCH], after[BATCH];
  int fds[2], status = 0;
  pid_t pid;
  config_for(&config, dir, "default", 4);
  CHECK_OK(rimeflake_generator_new(&config, &gen));
  CHECK_OK(rimeflake_fill(gen, before, BATCH));
  rimeflake_generator_free(gen);
  CHECK(pipe(fds) == 0);
  fflush(NULL);
  pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    exec_a_day_back(self, "child-bump", dir);
  }
  close(fds[1]);
  CHECK(read_all(fds[0], after, sizeof after));
  close(fds[0]);
  CHECK(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "child-bump: status %d\n", status);
  }
  CHECK(after[0] > before[BATCH - 1]);
  CHECK(disjoint_and_unique(before, BATCH, after, BATCH));
}

static void run_rollback_child(const char *self, const char *dir) {
  int status = 0;
  pid_t pid;
  fflush(NULL);
  pid = fork();
  if (pid == 0) {
    exec_a_day_back(self, "child-rollback", dir);
  }
  CHECK(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

void test_restart(const char *self) {
  char dir[256];
  rimeflake_config config;
  rimeflake_generator *gen = NULL;
  size_t cap = 4000000, got = 0, i;
  uint64_t *before = (uint64_t *)malloc(cap * sizeof *before);
  uint64_t after[BATCH], highest = 0;
  int fds[2], status = 0;
  pid_t pid;
  ssize_t n;
  make_temp_dir(dir, sizeof dir);
  CHECK(pipe(fds) == 0);
  fflush(NULL);
  pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    execl(self, self, "child-writer", dir, (char *)NULL);
    _exit(127);
  }
  close(fds[1]);
  /* Read a while, kill -9 in mid-stream, then drain what it had written. */
  while (got < cap / 2 && (n = read(fds[0], (char *)before + got * 8, (cap - got) * 8)) > 0) {
    got += (size_t)n / 8;
  }
  kill(pid, SIGKILL);
  while (got < cap && (n = read(fds[0], (char *)before + got * 8, (cap - got) * 8)) > 0) {
    got += (size_t)n / 8;
  }
  close(fds[0]);
  CHECK(waitpid(pid, &status, 0) == pid);
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  CHECK(got >= cap / 2);
  for (i = 0; i < got; i++) {
    if (before[i] > highest) highest = before[i];
  }
  /* The restart, right away, on the same worker ID: above everything the dead process gave. */
  config_for(&config, dir, "twitter", 9);
  CHECK_OK(rimeflake_generator_new(&config, &gen));
  CHECK_OK(rimeflake_fill(gen, after, BATCH));
  CHECK(after[0] > highest);
  CHECK(disjoint_and_unique(before, got, after, BATCH));
  rimeflake_generator_free(gen);
  free(before);

  run_rollback_child(self, dir);
  restart_with_clock_back(self, dir);
}
