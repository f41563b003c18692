// The syscall floor of the probe benchmark: for every path in a list file, open, pread the first
// 4 KiB (what `feedlayout probe` reads first) and close, in one thread, with nothing else.
// Prints the files read, the loop's seconds and the bytes read, like the Python loops of
// bench-probe-run.py, so its "without start" time compares directly.
// Usage: bench-probe-floor LIST_FILE
//        bench-probe-floor --paths FILE...   (the paths as arguments, as `feedlayout probe FILE...` takes them)
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static char buffer[4096];
static long files = 0, bytes = 0;

// Opens, reads the first 4 KiB of and closes one file; 0 on success.
static int read_head(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        perror(path);
        return 1;
    }
    ssize_t n = pread(fd, buffer, sizeof buffer, 0);
    if (n < 0) {
        perror(path);
        return 1;
    }
    bytes += n;
    files += 1;
    close(fd);
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "--paths") == 0) {
        double start = now();
        for (int i = 2; i < argc; i++) {
            if (read_head(argv[i])) return 1;
        }
        printf("%ld %.6f %ld\n", files, now() - start, bytes);
        return 0;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: %s LIST_FILE | --paths FILE...\n", argv[0]);
        return 2;
    }
    FILE *list = fopen(argv[1], "r");
    if (!list) {
        perror(argv[1]);
        return 1;
    }
    // Read the whole list first, so the timed loop holds only the per-file system calls.
    size_t capacity = 1 << 20, length = 0;
    char *text = malloc(capacity + 1);
    size_t got;
    while ((got = fread(text + length, 1, capacity - length, list)) > 0) {
        length += got;
        if (length == capacity) text = realloc(text, (capacity *= 2) + 1);
    }
    fclose(list);
    text[length] = '\0';

    double start = now();
    for (char *path = strtok(text, "\n"); path; path = strtok(NULL, "\n")) {
        if (read_head(path)) return 1;
    }
    printf("%ld %.6f %ld\n", files, now() - start, bytes);
    return 0;
}
