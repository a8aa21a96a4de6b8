/* The shared vectors (testdata/vectors.json, turned into vectors.h by vectors.py): compose,
 * decode, the four string forms and everything that must be refused. */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <string.h>

#include "check.h"

struct vector_case {
  const char *layout, *name;
  rimeflake_parts parts;
  uint64_t id;
  const char *dec, *hex, *base62, *base32;
};
struct vector_invalid_id {
  const char *layout;
  uint64_t id;
  const char *error;
};
struct vector_invalid_parts {
  const char *layout;
  rimeflake_parts parts;
  const char *error;
};
struct vector_layout {
  const char *preset, *spec;
};
struct vector_invalid_layout {
  const char *layout, *error;
};
struct vector_layout_spec {
  const char *spec, *name, *describe, *error; /* name and describe, or error */
};
struct vector_round_trip {
  uint64_t id;
  const char *dec, *hex, *base62, *base32;
};
struct vector_alias {
  const char *encoding, *text;
  uint64_t id;
};
struct vector_invalid_text {
  const char *encoding, *text, *error;
};

#include "vectors.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static rimeflake_layout *layout_of(const char *spec) {
  rimeflake_layout *layout = NULL;
  if (rimeflake_layout_new(spec, &layout) != RIMEFLAKE_OK) {
    fprintf(stderr, "layout %s: %s\n", spec, rimeflake_last_error_message());
    check_failures++;
  }
  return layout;
}

static int same_parts(const rimeflake_parts *a, const rimeflake_parts *b) {
  return a->clock_id == b->clock_id && a->timestamp_ms == b->timestamp_ms &&
         a->worker_id == b->worker_id && a->sequence == b->sequence &&
         a->has_datacenter_id == b->has_datacenter_id &&
         (!a->has_datacenter_id || a->datacenter_id == b->datacenter_id);
}

/* A layout's name, and its description (which is the spec it was made from, here). */
static void check_layout(const char *spec, const char *name, const char *describe) {
  rimeflake_layout *layout = NULL;
  const char *got = NULL;
  char text[RIMEFLAKE_LAYOUT_DESCRIBE_MAX];
  CHECK_OK(rimeflake_layout_new(spec, &layout));
  if (!layout) return;
  CHECK_OK(rimeflake_layout_name(layout, &got));
  CHECK(got && strcmp(got, name) == 0);
  CHECK_OK(rimeflake_layout_describe(layout, text, sizeof text, NULL));
  CHECK(strcmp(text, describe) == 0);
  rimeflake_layout_free(layout);
}

static void check_forms(uint64_t id, const char *const forms[4]) {
  static const char *const names[4] = {"dec", "hex", "base62", "base32"};
  char buf[RIMEFLAKE_FORMAT_MAX];
  uint64_t back = 0;
  size_t len = 0;
  int e;
  for (e = 0; e < 4; e++) {
    CHECK_OK(rimeflake_format(id, names[e], buf, sizeof buf, &len));
    CHECK(strcmp(buf, forms[e]) == 0 && len == strlen(forms[e]));
    CHECK_OK(rimeflake_parse(forms[e], names[e], &back));
    CHECK(back == id);
  }
}

void test_vectors(void) {
  size_t i;
  for (i = 0; i < COUNT(vector_layouts); i++) {
    /* baidu's preset name alone gives Baidu's own epoch; the vectors' baidu has another. */
    if (strcmp(vector_layouts[i].preset, "baidu") != 0) {
      check_layout(vector_layouts[i].preset, vector_layouts[i].preset, vector_layouts[i].spec);
    }
    check_layout(vector_layouts[i].spec, vector_layouts[i].preset, vector_layouts[i].spec);
  }
  for (i = 0; i < COUNT(vector_layout_specs); i++) {
    const struct vector_layout_spec *c = &vector_layout_specs[i];
    if (c->error) {
      rimeflake_layout *layout = NULL;
      rimeflake_status s = rimeflake_layout_new(c->spec, &layout);
      CHECK(strcmp(rimeflake_status_name(s), c->error) == 0);
      CHECK(layout == NULL);
    } else {
      check_layout(c->spec, c->name, c->describe);
    }
  }
  for (i = 0; i < COUNT(vector_cases); i++) {
    const struct vector_case *c = &vector_cases[i];
    rimeflake_layout *layout = layout_of(c->layout);
    rimeflake_parts parts;
    uint64_t id = 0;
    const char *forms[4];
    int failures_before = check_failures;
    if (!layout) {
      continue;
    }
    CHECK_OK(rimeflake_compose(layout, &c->parts, &id));
    CHECK(id == c->id);
    CHECK_OK(rimeflake_decode(layout, c->id, &parts));
    CHECK(same_parts(&parts, &c->parts));
    forms[0] = c->dec, forms[1] = c->hex, forms[2] = c->base62, forms[3] = c->base32;
    check_forms(c->id, forms);
    if (check_failures != failures_before) {
      fprintf(stderr, "  (in %s: %s)\n", c->layout, c->name);
    }
    rimeflake_layout_free(layout);
  }
  for (i = 0; i < COUNT(vector_invalid_ids); i++) {
    rimeflake_layout *layout = layout_of(vector_invalid_ids[i].layout);
    rimeflake_parts parts = {9, 9, 9, 9, 9, true};
    rimeflake_status s = rimeflake_decode(layout, vector_invalid_ids[i].id, &parts);
    CHECK(strcmp(rimeflake_status_name(s), vector_invalid_ids[i].error) == 0);
    CHECK(parts.clock_id == 9 && parts.sequence == 9);
    rimeflake_layout_free(layout);
  }
  for (i = 0; i < COUNT(vector_invalid_parts); i++) {
    rimeflake_layout *layout = layout_of(vector_invalid_parts[i].layout);
    uint64_t id = 42;
    rimeflake_status s = rimeflake_compose(layout, &vector_invalid_parts[i].parts, &id);
    CHECK(strcmp(rimeflake_status_name(s), vector_invalid_parts[i].error) == 0);
    CHECK(id == 42);
    rimeflake_layout_free(layout);
  }
  for (i = 0; i < COUNT(vector_invalid_layouts); i++) {
    rimeflake_layout *layout = NULL;
    rimeflake_status s = rimeflake_layout_new(vector_invalid_layouts[i].layout, &layout);
    CHECK(strcmp(rimeflake_status_name(s), vector_invalid_layouts[i].error) == 0);
    CHECK(layout == NULL);
  }
  for (i = 0; i < COUNT(vector_round_trips); i++) {
    const struct vector_round_trip *r = &vector_round_trips[i];
    const char *forms[4];
    forms[0] = r->dec, forms[1] = r->hex, forms[2] = r->base62, forms[3] = r->base32;
    check_forms(r->id, forms);
    if (i > 0) { /* the fixed-width forms sort like the numbers */
      CHECK(strcmp(vector_round_trips[i - 1].base62, r->base62) < 0);
      CHECK(strcmp(vector_round_trips[i - 1].base32, r->base32) < 0);
    }
  }
  for (i = 0; i < COUNT(vector_aliases); i++) {
    uint64_t id = 0;
    CHECK_OK(rimeflake_parse(vector_aliases[i].text, vector_aliases[i].encoding, &id));
    CHECK(id == vector_aliases[i].id);
  }
  for (i = 0; i < COUNT(vector_invalid_texts); i++) {
    uint64_t id = 42;
    rimeflake_status s =
        rimeflake_parse(vector_invalid_texts[i].text, vector_invalid_texts[i].encoding, &id);
    CHECK(strcmp(rimeflake_status_name(s), vector_invalid_texts[i].error) == 0);
    CHECK(id == 42);
  }
}
