/* bench/c: rimeflake_next_id and rimeflake_fill (the C API, through librimeflake.so) beside the
 * Rust core's Generator::next_id and fill (timed in Rust, bench/c/core) and the floor
 * (clock_gettime as Unix ms + one atomic add), in one run, by bench/METHOD.md's method:
 * twitter layout, worker 1, in memory; timed loops of at most 100,000 IDs, each followed by a
 * pause until the clock has passed the last ID; the median of 7 repetitions of 10 loops, the C
 * API and the core taking turns. Prints a Markdown section (also written to argv[1]). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include <rimeflake.h>

typedef struct core_gen core_gen;
core_gen *bench_core_new(void);
void bench_core_free(core_gen *g);
double bench_core_next_id(const core_gen *g, uint64_t n, uint64_t *last);
double bench_core_fill(const core_gen *g, uint64_t *buf, size_t n, uint64_t calls, uint64_t *last);

#define REPS 7
#define LOOPS 10
#define LOOP 100000
#ifndef FILL_N
#define FILL_N 4096
#endif
#ifndef FILL_CALLS
#define FILL_CALLS 24 /* 98,304 IDs a loop */
#endif

static double now_ns(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static const rimeflake_layout *twitter;

/* Sleeps until the clock has passed the time unit of `last`, plus a millisecond. */
static void settle(uint64_t last) {
  rimeflake_parts p;
  struct timespec ms = {0, 1000000};
  if (rimeflake_decode(twitter, last, &p) != RIMEFLAKE_OK) return;
  while (now_ns(CLOCK_REALTIME) / 1e6 <= (double)(p.timestamp_ms + 1)) nanosleep(&ms, NULL);
}

static void die(const char *what, rimeflake_status s) {
  fprintf(stderr, "%s: %s: %s\n", what, rimeflake_status_name(s), rimeflake_last_error_message());
  exit(1);
}

static volatile uint64_t sink;

static double c_next_id(const rimeflake_generator *g) {
  uint64_t id = 0, i;
  double t = now_ns(CLOCK_MONOTONIC), ns;
  for (i = 0; i < LOOP; i++) {
    rimeflake_next_id(g, &id);
    sink = id;
  }
  ns = now_ns(CLOCK_MONOTONIC) - t;
  settle(id);
  return ns;
}

static double c_fill(const rimeflake_generator *g, uint64_t *buf) {
  int i;
  double t = now_ns(CLOCK_MONOTONIC), ns;
  for (i = 0; i < FILL_CALLS; i++) {
    rimeflake_fill(g, buf, FILL_N);
    /* Nothing is read back inside the timed loop, as in the Rust loop: reading the last ID
     * right after the fill waits for the fill's stores to drain, which cost up to 25% of a
     * fill of 4,096 here: a cost of that read, not of the call. */
    __asm__ volatile("" ::: "memory");
  }
  ns = now_ns(CLOCK_MONOTONIC) - t;
  settle(buf[FILL_N - 1]);
  return ns;
}

static double core_next_id(const core_gen *g) {
  uint64_t last = 0;
  double ns = bench_core_next_id(g, LOOP, &last);
  settle(last);
  return ns;
}

static double core_fill(const core_gen *g, uint64_t *buf) {
  uint64_t last = 0;
  double ns = bench_core_fill(g, buf, FILL_N, FILL_CALLS, &last);
  settle(last);
  return ns;
}

static uint64_t counter;

static double floor_loop(void) {
  uint64_t i;
  double t = now_ns(CLOCK_MONOTONIC);
  for (i = 0; i < LOOP * LOOPS; i++) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    sink = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000 +
           __atomic_fetch_add(&counter, 1, __ATOMIC_SEQ_CST);
  }
  return (now_ns(CLOCK_MONOTONIC) - t) / (LOOP * LOOPS);
}

int main(int argc, char **argv) {
  rimeflake_config config;
  rimeflake_generator *gen = NULL;
  rimeflake_layout *layout = NULL;
  core_gen *core = bench_core_new();
  /* One page-aligned buffer, shared by both sides. */
  uint64_t *buf = (uint64_t *)aligned_alloc(4096, FILL_N * sizeof *buf);
  double c_id[REPS], k_id[REPS], c_f[REPS], k_f[REPS], fl[REPS];
  /* Each C loop over the core loop next to it (same moment, same load): robust to the load of
   * a shared machine drifting during the run. */
  double pair_id[REPS * LOOPS], pair_f[REPS * LOOPS];
  double loadavg[3] = {0, 0, 0};
  struct utsname un;
  char cpu[256] = "unknown", line[512], stamp[64];
  FILE *f, *out;
  int r, l;
  time_t t0 = time(NULL);

  rimeflake_config_init(&config);
  config.layout = "twitter";
  config.worker_id = 1;
  config.backend = "memory";
  rimeflake_status s = rimeflake_generator_new(&config, &gen);
  if (s != RIMEFLAKE_OK) die("rimeflake_generator_new", s);
  if ((s = rimeflake_layout_new("twitter", &layout)) != RIMEFLAKE_OK) die("layout", s);
  twitter = layout;
  getloadavg(loadavg, 3);

  /* Warm-up, then repetitions with the C API and the core taking turns. */
  c_next_id(gen), core_next_id(core), c_fill(gen, buf), core_fill(core, buf);
  for (r = 0; r < REPS; r++) {
    double a = 0, b = 0, c = 0, d = 0;
    for (l = 0; l < LOOPS; l++) {
      double x, y, z, w;
      if (l % 2 == 0) { /* alternate which goes first */
        x = c_next_id(gen), y = core_next_id(core), z = c_fill(gen, buf), w = core_fill(core, buf);
      } else {
        y = core_next_id(core), x = c_next_id(gen), w = core_fill(core, buf), z = c_fill(gen, buf);
      }
      a += x, b += y, c += z, d += w;
      pair_id[r * LOOPS + l] = x / y;
      pair_f[r * LOOPS + l] = z / w;
    }
    c_id[r] = a / (LOOPS * (double)LOOP);
    k_id[r] = b / (LOOPS * (double)LOOP);
    c_f[r] = c / (LOOPS * (double)FILL_CALLS * FILL_N);
    k_f[r] = d / (LOOPS * (double)FILL_CALLS * FILL_N);
    fl[r] = floor_loop();
  }
  double mc = median(c_id, REPS), mk = median(k_id, REPS), fc = median(c_f, REPS),
         fk = median(k_f, REPS), mf = median(fl, REPS);
  double pid = median(pair_id, REPS * LOOPS), pf = median(pair_f, REPS * LOOPS);

  uname(&un);
  if ((f = fopen("/proc/cpuinfo", "r"))) {
    while (fgets(line, sizeof line, f)) {
      char *colon = strchr(line, ':');
      if (!strncmp(line, "model name", 10) && colon) {
        snprintf(cpu, sizeof cpu, "%s", colon + 2);
        cpu[strcspn(cpu, "\n")] = 0;
        break;
      }
    }
    fclose(f);
  }
  strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t0));
  out = argc > 1 ? fopen(argv[1], "w") : NULL;
  for (f = stdout; f; f = (f == stdout ? out : NULL)) {
    fprintf(f, "## C (`bench/c`)\n\n");
    fprintf(f, "Command: `make bench-c`. The C API (`librimeflake.so`, release build, called from C "
               "through the PLT) beside the Rust core's calls timed in Rust in the same process "
               "(`bench/c/core`), and the floor. Method: bench/METHOD.md; `twitter` layout, worker 1, "
               "in memory; loops of at most 100,000 IDs, each followed by a pause until the clock "
               "has passed the last ID; median of %d repetitions of %d loops, C API and core taking "
               "turns. Absolute figures move 20-40%% between runs on this shared machine: read the "
               "ratios.\n\n", REPS, LOOPS);
    fprintf(f, "- date: %s\n- cpu: %s\n- kernel: %s %s\n- rimeflake: %s\n"
               "- load average at start: %.2f %.2f %.2f\n\n",
            stamp, cpu, un.sysname, un.release, rimeflake_version(), loadavg[0], loadavg[1],
            loadavg[2]);
    fprintf(f, "| what | ns/ID (median) | × core | × floor |\n|---|---:|---:|---:|\n");
    fprintf(f, "| floor: clock_gettime as Unix ms + one atomic add | %.2f | | 1.00 |\n", mf);
    fprintf(f, "| core `Generator::next_id` (Rust) | %.2f | 1.00 | %.2f |\n", mk, mk / mf);
    fprintf(f, "| C `rimeflake_next_id` | %.2f | **%.3f** | %.2f |\n", mc, mc / mk, mc / mf);
    fprintf(f, "| core `Generator::fill`, 4,096 IDs (Rust) | %.3f | 1.00 | |\n", fk);
    fprintf(f, "| C `rimeflake_fill`, 4,096 IDs | %.3f | **%.3f** | |\n\n", fc, fc / fk);
    fprintf(f, "| target (issue 11) | ratio of medians | met | median of paired loops | met |\n"
               "|---|---:|---|---:|---|\n");
    fprintf(f, "| rimeflake_next_id / core next_id ≤ 1.1 | %.3f | %s | %.3f | %s |\n", mc / mk,
            mc / mk <= 1.1 ? "yes" : "no", pid, pid <= 1.1 ? "yes" : "no");
    fprintf(f, "| rimeflake_fill(4096) / core fill(4096) ≤ 1.1 | %.3f | %s | %.3f | %s |\n", fc / fk,
            fc / fk <= 1.1 ? "yes" : "no", pf, pf <= 1.1 ? "yes" : "no");
    fprintf(f, "\nPaired loops: each C loop over the core loop run right beside it (which goes "
               "first alternates), the median of %d pairs; it follows the machine's load as it "
               "drifts, which the ratio of medians does not.\n", REPS * LOOPS);
    fprintf(f, "\nEvery repetition (ns/ID), C next_id / core next_id / C fill / core fill / floor:\n\n");
    for (r = 0; r < REPS; r++) {
      fprintf(f, "%s%.2f/%.2f/%.3f/%.3f/%.2f", r ? ", " : "", c_id[r], k_id[r], c_f[r], k_f[r], fl[r]);
    }
    fprintf(f, "\n");
  }
  if (out) fclose(out);
  rimeflake_layout_free(layout);
  rimeflake_generator_free(gen);
  bench_core_free(core);
  free(buf);
  return 0;
}
