/* Warnings without a callback: printed on stderr, one line each, as every other front end shows
 * them by default; rimeflake_warning_ignore drops them. (They were dropped without a word.)
 *
 * A warning every run gives: a Redis namespace's worker ID whose state the server lost (its key
 * deleted here, as FLUSHALL would), on the Redis of scripts/with-redis. */
#define _POSIX_C_SOURCE 200809L

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"

/* DEL `key` on the Redis at `url` (redis://127.0.0.1:PORT/0), in the protocol's own words. */
static int redis_del(const char *url, const char *key) {
  const char *port = strrchr(url, ':');
  struct sockaddr_in addr;
  char request[256], reply[64];
  int fd, ok;
  if (!port || strncmp(url, "redis://127.0.0.1:", 18) != 0) {
    return 0;
  }
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_port = htons((unsigned short)atoi(port + 1));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
    if (fd >= 0) {
      close(fd);
    }
    return 0;
  }
  snprintf(request, sizeof request, "*2\r\n$3\r\nDEL\r\n$%zu\r\n%s\r\n", strlen(key), key);
  ok = write(fd, request, strlen(request)) == (ssize_t)strlen(request) &&
       read(fd, reply, sizeof reply) > 0 && strncmp(reply, ":1", 2) == 0;
  close(fd);
  return ok;
}

/* What the process writes on stderr while it makes and frees a generator with `config`. */
static void stderr_of_a_start(const rimeflake_config *config, char *out, size_t size) {
  FILE *capture = tmpfile();
  int saved;
  size_t n;
  rimeflake_generator *gen = NULL;
  out[0] = '\0';
  if (!capture) {
    CHECK(capture != NULL);
    return;
  }
  fflush(stderr);
  saved = dup(2);
  dup2(fileno(capture), 2);
  CHECK_OK(rimeflake_generator_new(config, &gen));
  rimeflake_generator_free(gen);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  rewind(capture);
  n = fread(out, 1, size - 1, capture);
  out[n] = '\0';
  fclose(capture);
}

void test_warnings_on_stderr(void) {
  const char *url = getenv("RIMEFLAKE_TEST_REDIS_URL");
  char ns[64], key[128], said[4096], want[256];
  rimeflake_config config;
  rimeflake_generator *gen = NULL;
  uint64_t id = 0;
  if (!url || !*url) {
    fprintf(stderr, "RIMEFLAKE_TEST_REDIS_URL is not set: run `make test-c` (it starts "
                    "redis-server) or the tests under scripts/with-redis\n");
    check_failures++;
    return;
  }
  snprintf(ns, sizeof ns, "c-warn-%ld", (long)getpid());
  snprintf(key, sizeof key, "rimeflake:{%s:5}:state", ns);
  config_for(&config, NULL, NULL, 5);
  config.backend = url;
  config.namespace_name = ns;
  /* Worker ID 5 issues an ID, so the namespace records it as used, with a state. */
  CHECK_OK(rimeflake_generator_new(&config, &gen));
  CHECK_OK(rimeflake_next_id(gen, &id));
  rimeflake_generator_free(gen);

  /* The state lost: the next start warns, on stderr, in one line. */
  CHECK(redis_del(url, key));
  stderr_of_a_start(&config, said, sizeof said);
  snprintf(want, sizeof want,
           "rimeflake: warning: worker ID 5 of namespace %s on redis://127.0.0.1:", ns);
  CHECK(strncmp(said, want, strlen(want)) == 0);
  CHECK(strstr(said, "was used before, but the server has no state for it") != NULL);
  CHECK(said[0] != '\0' && strchr(said, '\n') == said + strlen(said) - 1);
  if (strncmp(said, want, strlen(want)) != 0) {
    fprintf(stderr, "stderr was: %s\n", said);
  }

  /* rimeflake_warning_ignore: the same start says nothing. */
  CHECK(redis_del(url, key));
  config.on_warning = rimeflake_warning_ignore;
  stderr_of_a_start(&config, said, sizeof said);
  CHECK(strcmp(said, "") == 0);
}
