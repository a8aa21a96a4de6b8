/* rimeflake from C: make a generator on the embedded default, take IDs, decode one.
 * Build: see Makefile (pkg-config --cflags --libs rimeflake). */
#include <stdio.h>

#include <rimeflake.h>

static int fail(const char *what, rimeflake_status status) {
  fprintf(stderr, "%s: %s: %s\n", what, rimeflake_status_name(status),
          rimeflake_last_error_message());
  return 1;
}

int main(void) {
  rimeflake_config config;
  rimeflake_generator *gen = NULL;
  rimeflake_layout *layout = NULL;
  rimeflake_parts parts;
  uint64_t a, b, batch[4096];
  char text[RIMEFLAKE_FORMAT_MAX];
  rimeflake_status s;

  rimeflake_config_init(&config); /* the defaults: a leased worker ID, durable state */
  config.layout = "twitter";
  if ((s = rimeflake_generator_new(&config, &gen)) != RIMEFLAKE_OK) return fail("new", s);

  if ((s = rimeflake_next_id(gen, &a)) != RIMEFLAKE_OK) return fail("next_id", s);
  if ((s = rimeflake_next_id(gen, &b)) != RIMEFLAKE_OK) return fail("next_id", s);
  if (!(a < b)) return fail("order", RIMEFLAKE_ERROR);
  if ((s = rimeflake_fill(gen, batch, 4096)) != RIMEFLAKE_OK) return fail("fill", s);

  rimeflake_generator_layout(gen, &layout);
  rimeflake_decode(layout, b, &parts);
  rimeflake_format(b, "base62", text, sizeof text, NULL);
  printf("rimeflake %s: %llu (base62 %s): worker %llu, sequence %llu, at %llu ms\n",
         rimeflake_version(), (unsigned long long)b, text, (unsigned long long)parts.worker_id,
         (unsigned long long)parts.sequence, (unsigned long long)parts.timestamp_ms);

  rimeflake_layout_free(layout);
  rimeflake_generator_free(gen); /* closes: the reservation is stored, the lease freed */
  return 0;
}
