/* NULL and invalid arguments, too-small buffers: a status each, and nothing written to an
 * out-parameter on failure. */
#define _POSIX_C_SOURCE 200809L

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "check.h"

#define BAD RIMEFLAKE_INVALID_ARGUMENT

void test_arguments(void) {
  char dir[256], buf[64];
  rimeflake_config config;
  rimeflake_generator *gen = NULL;
  rimeflake_generator *untouched = (rimeflake_generator *)&config;
  rimeflake_layout *layout = NULL;
  rimeflake_parts parts = {1, 2, 3, 4, 0, false};
  rimeflake_generator_stats stats;
  uint64_t id = 42, ids[4] = {7, 7, 7, 7};
  size_t len = 99;
  static const char not_utf8[] = {'t', 'w', (char)0xff, 0};

  make_temp_dir(dir, sizeof dir);
  config_for(&config, dir, "twitter", 2);

  /* NULL everywhere a pointer is needed. */
  CHECK_STATUS(rimeflake_config_init(NULL), BAD);
  CHECK_STATUS(rimeflake_generator_new(&config, NULL), BAD);
  CHECK_STATUS(rimeflake_next_id(NULL, &id), BAD);
  CHECK_STATUS(rimeflake_fill(NULL, ids, 4), BAD);
  CHECK_STATUS(rimeflake_generator_close(NULL), BAD);
  CHECK_STATUS(rimeflake_stats(NULL, &stats), BAD);
  CHECK_STATUS(rimeflake_layout_new(NULL, &layout), BAD);
  CHECK_STATUS(rimeflake_layout_new("twitter", NULL), BAD);
  CHECK_STATUS(rimeflake_layout_preset(NULL, &layout), BAD);
  CHECK_STATUS(rimeflake_decode(NULL, 1, &parts), BAD);
  CHECK_STATUS(rimeflake_compose(NULL, &parts, &id), BAD);
  CHECK_STATUS(rimeflake_format(1, NULL, buf, sizeof buf, &len), BAD);
  CHECK_STATUS(rimeflake_format(1, "hex", NULL, sizeof buf, &len), BAD);
  CHECK_STATUS(rimeflake_parse(NULL, "hex", &id), BAD);
  CHECK_STATUS(rimeflake_parse("1", NULL, &id), BAD);
  CHECK_STATUS(rimeflake_parse("1", "dec", NULL), BAD);
  CHECK_STATUS(rimeflake_global_id(NULL, 80, &len), BAD);
  CHECK(strstr(rimeflake_last_error_message(), "buf is NULL") != NULL);
  rimeflake_generator_free(NULL);
  rimeflake_layout_free(NULL);

  /* Text that is not UTF-8, a negative worker ID other than -1. */
  config.layout = not_utf8;
  CHECK_STATUS(rimeflake_generator_new(&config, &gen), BAD);
  CHECK_STATUS(rimeflake_layout_new(not_utf8, &layout), BAD);
  config_for(&config, dir, "twitter", -2);
  gen = untouched;
  CHECK_STATUS(rimeflake_generator_new(&config, &gen), BAD);
  CHECK(gen == untouched);
  CHECK_STATUS(rimeflake_parse(not_utf8, "dec", &id), RIMEFLAKE_INVALID_ID);
  CHECK_STATUS(rimeflake_format(1, "octal", buf, sizeof buf, &len), RIMEFLAKE_CONFIG);

  /* With a live generator and layout: NULL out-parameters and misaligned ones. */
  config_for(&config, dir, "twitter", 2);
  CHECK_OK(rimeflake_generator_new(&config, &gen));
  CHECK_STATUS(rimeflake_next_id(gen, NULL), BAD);
  CHECK_STATUS(rimeflake_next_id(gen, (uint64_t *)(void *)(buf + 1)), BAD);
  CHECK_STATUS(rimeflake_fill(gen, NULL, 4), BAD);
  CHECK_OK(rimeflake_fill(gen, NULL, 0));
  CHECK_STATUS(rimeflake_fill(gen, ids, SIZE_MAX), BAD);
  CHECK_STATUS(rimeflake_fill(gen, ids, SIZE_MAX / 8 + 1), BAD);
  CHECK_STATUS(rimeflake_stats(gen, NULL), BAD);
  CHECK_STATUS(rimeflake_stats_sized(gen, &stats, 8), BAD);
  /* A program built with the first header (its struct ended at server_skew_ms) gets that much,
   * and nothing is written past it. */
  {
    size_t first = offsetof(rimeflake_generator_stats, reservation_writes);
    memset(&stats, 0xAB, sizeof stats);
    CHECK_OK(rimeflake_stats_sized(gen, &stats, first));
    CHECK(stats.server_skew_ms == 0);
    CHECK(stats.reservation_writes == 0xABABABABABABABABull);
    CHECK(stats.lease_state == 0xABABABABu);
  }
  CHECK_STATUS(rimeflake_generator_worker_id(gen, NULL), BAD);
  CHECK_STATUS(rimeflake_generator_layout(gen, NULL), BAD);
  CHECK_OK(rimeflake_generator_layout(gen, &layout));
  CHECK_STATUS(rimeflake_decode(layout, 1, NULL), BAD);
  CHECK_STATUS(rimeflake_compose(layout, NULL, &id), BAD);
  CHECK_STATUS(rimeflake_compose(layout, &parts, NULL), BAD);
  CHECK_STATUS(rimeflake_layout_describe(layout, NULL, 64, &len), BAD);

  /* Buffers too small: nothing written, not even the length. */
  memset(buf, 'x', sizeof buf);
  len = 99;
  CHECK_STATUS(rimeflake_format(UINT64_MAX, "dec", buf, 20, &len), RIMEFLAKE_BUFFER_TOO_SMALL);
  CHECK(buf[0] == 'x' && len == 99);
  CHECK(strstr(rimeflake_last_error_message(), "21 bytes") != NULL);
  CHECK_OK(rimeflake_format(UINT64_MAX, "dec", buf, RIMEFLAKE_FORMAT_MAX, &len));
  CHECK(len == 20 && strcmp(buf, "18446744073709551615") == 0);
  CHECK_STATUS(rimeflake_format(1, "hex", buf, 0, &len), RIMEFLAKE_BUFFER_TOO_SMALL);
  CHECK_STATUS(rimeflake_global_id(buf, 10, &len), RIMEFLAKE_BUFFER_TOO_SMALL);
  CHECK_STATUS(rimeflake_layout_describe(layout, buf, 3, &len), RIMEFLAKE_BUFFER_TOO_SMALL);
  CHECK(len == 20);
  {
    /* The description reads back to the same layout (a preset keeps its name). */
    char text[RIMEFLAKE_LAYOUT_DESCRIBE_MAX];
    rimeflake_layout *again = NULL;
    rimeflake_parts p = {0, 1700000000000, 5, 6, 0, false};
    uint64_t x = 1, y = 2;
    CHECK_OK(rimeflake_layout_describe(layout, text, sizeof text, &len));
    CHECK(len == strlen(text));
    CHECK_OK(rimeflake_layout_new(text, &again));
    CHECK_OK(rimeflake_compose(layout, &p, &x));
    CHECK_OK(rimeflake_compose(again, &p, &y));
    CHECK(x == y);
    rimeflake_layout_free(again);
  }

  /* Out-parameters keep their values on every failure above. */
  CHECK(ids[0] == 7 && ids[3] == 7);
  CHECK(parts.clock_id == 1 && parts.sequence == 4);
  rimeflake_layout_free(layout);
  rimeflake_generator_free(gen);
}
