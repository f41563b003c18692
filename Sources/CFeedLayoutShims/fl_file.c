#define _GNU_SOURCE
#include "fl_file.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/syscall.h>
#include <unistd.h>

int fl_rename_exchange(const char *first, const char *second) {
    // The system call, not glibc's renameat2 wrapper: the wrapper needs glibc 2.28 and a feature macro in
    // every including file; the call itself exists since Linux 3.15.
    return (int)syscall(SYS_renameat2, AT_FDCWD, first, AT_FDCWD, second, RENAME_EXCHANGE);
}
