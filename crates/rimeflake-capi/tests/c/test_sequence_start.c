/* random_sequence_start through the C config: IDs spaced more than a time unit apart start each
 * unit's sequence at an offset, so id % 16 spreads over the shards (with it off, every such ID
 * has sequence 0 and lands on shard 0); sonyflake's order refuses it; the header before the
 * field still works, the field defaulted. */
#define _POSIX_C_SOURCE 200809L

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "check.h"

#define SPACED 64

/* SPACED IDs of a `default` generator, 2 ms apart (each in a unit of its own, entered after an
 * idle spell); their sequences into `seqs`; how many of the 16 shards (id % 16) they reach. */
static int spaced_shards(bool spread, uint64_t *seqs) {
  rimeflake_config config;
  rimeflake_generator *gen = NULL;
  rimeflake_layout *layout = NULL;
  rimeflake_parts parts;
  uint64_t id = 0, last = 0;
  int hit[16] = {0}, shards = 0;
  config_for(&config, NULL, "default", 1);
  config.backend = "memory";
  config.random_sequence_start = spread;
  CHECK_OK(rimeflake_generator_new(&config, &gen));
  CHECK_OK(rimeflake_generator_layout(gen, &layout));
  for (int i = 0; i < SPACED; i++) {
    struct timespec pause = {0, 2 * 1000 * 1000};
    nanosleep(&pause, NULL);
    CHECK_OK(rimeflake_next_id(gen, &id));
    CHECK(id > last);
    last = id;
    CHECK_OK(rimeflake_decode(layout, id, &parts));
    CHECK(parts.worker_id == 1); /* decode reads the fields as ever */
    seqs[i] = parts.sequence;
    hit[id % 16] = 1;
  }
  rimeflake_layout_free(layout);
  rimeflake_generator_free(gen);
  for (int s = 0; s < 16; s++) shards += hit[s];
  return shards;
}

void test_sequence_start(void) {
  uint64_t seqs[SPACED];
  int nonzero = 0;
  rimeflake_config config;
  rimeflake_generator *gen = NULL;

  /* Off: every spaced ID is its unit's sequence 0, all on shard 0 of 16. */
  CHECK(spaced_shards(false, seqs) == 1);
  for (int i = 0; i < SPACED; i++) CHECK(seqs[i] == 0);
  /* On: offsets uniform over 512 sequences; fewer than 8 of 16 shards in 64 draws has a chance
   * below 1e-15, and more than 8 zero sequences below 1e-12. */
  CHECK(spaced_shards(true, seqs) >= 8);
  for (int i = 0; i < SPACED; i++) nonzero += seqs[i] != 0;
  CHECK(nonzero >= SPACED - 8);

  /* Sonyflake puts the worker below the sequence: refused, naming the field. */
  config_for(&config, NULL, "sonyflake", 1);
  config.backend = "memory";
  config.random_sequence_start = true;
  CHECK_STATUS(rimeflake_generator_new(&config, &gen), RIMEFLAKE_CONFIG);
  CHECK(gen == NULL);
  CHECK(strstr(rimeflake_last_error_message(), "random_sequence_start: layout sonyflake") != NULL);

  /* The header before random_sequence_start: accepted, the field off, whatever lies past it. */
  size_t older = offsetof(rimeflake_config, random_sequence_start);
  memset(&config, 0xAB, sizeof config);
  CHECK_OK(rimeflake_config_init_sized(&config, older));
  CHECK(((unsigned char *)&config)[older] == 0xAB);
  config.layout = "sonyflake"; /* which would refuse it, were it read as on */
  config.backend = "memory";
  config.worker_id = 1;
  CHECK_OK(rimeflake_generator_new(&config, &gen));
  rimeflake_generator_free(gen);
}
