/* A minimal test harness shared by the C test files. */
#ifndef RIMEFLAKE_TEST_CHECK_H
#define RIMEFLAKE_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include "rimeflake.h"

extern int check_failures;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      check_failures++;                                                        \
    }                                                                          \
  } while (0)

/* A call's status must be `want` (a rimeflake_status); prints the message when it is not. */
#define CHECK_STATUS(call, want)                                               \
  do {                                                                         \
    rimeflake_status got_ = (call);                                            \
    if (got_ != (want)) {                                                      \
      fprintf(stderr, "%s:%d: %s gave %s, not %s: %s\n", __FILE__, __LINE__,   \
              #call, rimeflake_status_name(got_), rimeflake_status_name(want), \
              rimeflake_last_error_message());                                 \
      check_failures++;                                                        \
    }                                                                          \
  } while (0)

#define CHECK_OK(call) CHECK_STATUS(call, RIMEFLAKE_OK)

/* A fresh directory under $TMPDIR (or /tmp) for state; the caller owns it. */
void make_temp_dir(char *buf, size_t size);

/* A config with its defaults, a fresh state directory and the given layout and worker ID. */
void config_for(rimeflake_config *config, const char *state_dir, const char *layout,
                long worker_id);

void test_vectors(void);
void test_statuses(const char *self);
void test_arguments(void);
void test_threads(void);
void test_fork(void);
void test_restart(const char *self);
void test_warnings_on_stderr(void);
void test_sequence_start(void);

/* Runs the mode argv names, when the test binary is run as a child process, and gives its
 * exit code; -1 when argv names none. */
int child_mode(int argc, char **argv);

#endif
