/* A hostile bot in C for the containment tests: it answers the protocol (the first legal
 * card; the first cards of its hand for a pass) and, at its first decision, does what its
 * build's -D flag says, reporting on stderr:
 *   FORK_BOMB    fork until refused          -> "FORK_REFUSED after N"
 *   MEMORY_BOMB  touch 1 MiB after 1 MiB     -> "MEMORY_REFUSED after N MiB" (or killed)
 *   NETWORK      connect to 127.0.0.1:6379, list interfaces -> "redis: DENIED ..." / OPEN
 *   CPU_BURN     spin forever                -> stopped by its clock
 * Hand-parsed JSON on purpose: only what the referee sends is read. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

static char line[1 << 16];

static const char *after(const char *text, const char *key) {
    const char *at = strstr(text, key);
    return at ? at + strlen(key) : NULL;
}

static void hostile(void) {
    static int done = 0;
    if (done++) return;
#if defined(FORK_BOMB)
    int made = 0;
    for (int i = 0; i < 10000; i++) {
        pid_t child = fork();
        if (child == 0) { pause(); _exit(0); }
        if (child < 0) { fprintf(stderr, "FORK_REFUSED after %d: %s\n", made, strerror(errno)); break; }
        made++;
    }
#elif defined(MEMORY_BOMB)
    int held = 0;
    for (int i = 0; i < 100000; i++) {
        char *block = malloc(1 << 20);
        if (!block) { fprintf(stderr, "MEMORY_REFUSED after %d MiB\n", held); break; }
        memset(block, 1, 1 << 20);
        held++;
        if (held % 64 == 0) { fprintf(stderr, "HELD %d MiB\n", held); }
    }
#elif defined(NETWORK)
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in redis = {0};
    redis.sin_family = AF_INET;
    redis.sin_port = htons(6379);
    inet_pton(AF_INET, "127.0.0.1", &redis.sin_addr);
    if (fd < 0) fprintf(stderr, "redis: DENIED socket: %s\n", strerror(errno));
    else if (connect(fd, (struct sockaddr *)&redis, sizeof redis) < 0)
        fprintf(stderr, "redis: DENIED connect: %s\n", strerror(errno));
    else fprintf(stderr, "redis: OPEN\n");
    FILE *dev = fopen("/proc/net/dev", "r");
    char row[256];
    int lines = 0;
    fprintf(stderr, "interfaces:");
    while (dev && fgets(row, sizeof row, dev)) {
        if (++lines > 2) { char *colon = strchr(row, ':'); if (colon) *colon = 0; fprintf(stderr, " %s", row + strspn(row, " ")); }
    }
    fprintf(stderr, "\n");
    FILE *passwd = fopen("/etc/passwd", "r");
    fprintf(stderr, "passwd: %s\n", passwd ? "OPEN" : "DENIED");
#elif defined(CPU_BURN)
    volatile unsigned long spin = 0;
    for (;;) spin++;
#endif
}

/* The first `count` two-character cards of the JSON array after `key`, written as JSON. */
static void cards(const char *text, const char *key, int count, char *out) {
    const char *at = after(text, key);
    strcpy(out, count > 1 ? "[" : "");
    for (int taken = 0; at && taken < count; taken++) {
        at = strchr(at, '"');
        if (!at) break;
        if (taken) strcat(out, ",");
        strncat(out, at, 4);
        at += 4;
    }
    if (count > 1) strcat(out, "]");
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    while (fgets(line, sizeof line, stdin)) {
        const char *type = after(line, "\"type\":\"");
        if (!type) continue;
        if (!strncmp(type, "hello", 5)) {
            printf("{\"type\": \"ready\", \"name\": \"hostile-c\"}\n");
        } else if (!strncmp(type, "act", 3)) {
            long id = strtol(after(line, "\"id\":"), NULL, 10);
            char action[256];
            const char *count = after(line, "\"count\":");
            hostile();
            if (count) cards(line, "\"hand\":[", atoi(count), action);
            else cards(line, "\"legal\":[", 1, action);
            printf("{\"type\": \"action\", \"id\": %ld, \"action\": %s}\n", id, action);
        } else if (!strncmp(type, "bye", 3)) {
            return 0;
        }
    }
    return 0;
}
