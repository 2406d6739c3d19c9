/*
 * clockshift: an LD_PRELOAD library that moves a process's wall clock, for Redlock's
 * "clock jump" fault. Debian's libfaketime would do, but Debian's redis-server 7.0 will not
 * start under it (it clashes with the server's jemalloc), so oversell builds this instead.
 *
 * The offset, in milliseconds, is a little-endian i64 in the 8-byte file named by
 * OVERSELL_CLOCK_OFFSET_FILE. The constructor maps it MAP_SHARED, so a write to the file is
 * seen by the very next call, at the cost of one load. No env var, no file, or a file shorter
 * than 8 bytes: offset 0 (mapping a short file would SIGBUS on read). Writers must never
 * truncate the file while a process maps it.
 *
 * Only CLOCK_REALTIME and CLOCK_REALTIME_COARSE move (through clock_gettime, gettimeofday
 * and time); monotonic clocks stay as they are, as on a real machine whose NTP steps.
 *
 * Every call goes to the kernel through syscall(): asking the dynamic linker for libc's own
 * functions (dlsym) may allocate, and these run inside the allocator and before main, so
 * this library never allocates and never calls a libc time function that could lead back
 * here. The price is a real syscall instead of the vDSO, a few hundred nanoseconds.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static const volatile int64_t *offset_ms; /* NULL: no offset file, offset 0 */

__attribute__((constructor)) static void clockshift_init(void) {
    const char *path = getenv("OVERSELL_CLOCK_OFFSET_FILE");
    if (path == NULL || *path == '\0')
        return;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size >= 8) {
        void *map = mmap(NULL, 8, PROT_READ, MAP_SHARED, fd, 0);
        if (map != MAP_FAILED)
            offset_ms = map;
    }
    close(fd); /* the mapping outlives the descriptor */
}

static int64_t offset(void) {
    if (offset_ms == NULL)
        return 0;
    int64_t ms = __atomic_load_n(offset_ms, __ATOMIC_RELAXED); /* one aligned 8-byte load */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    ms = (int64_t)__builtin_bswap64((uint64_t)ms);
#endif
    return ms;
}

int clock_gettime(clockid_t clock, struct timespec *ts) {
    long rc = syscall(SYS_clock_gettime, clock, ts);
    int64_t ms;
    if (rc == 0 && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE) &&
        (ms = offset()) != 0) {
        int64_t ns = (int64_t)ts->tv_nsec + (ms % 1000) * 1000000;
        ts->tv_sec += ms / 1000 + ns / 1000000000;
        ns %= 1000000000;
        if (ns < 0) {
            ns += 1000000000;
            ts->tv_sec -= 1;
        }
        ts->tv_nsec = ns;
    }
    return (int)rc;
}

/* tv is never NULL: glibc declares it nonnull, and the compiler drops any check for it. */
int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
    long rc = syscall(SYS_gettimeofday, tv, tz);
    int64_t ms;
    if (rc == 0 && (ms = offset()) != 0) {
        int64_t us = (int64_t)tv->tv_usec + (ms % 1000) * 1000;
        tv->tv_sec += ms / 1000 + us / 1000000;
        us %= 1000000;
        if (us < 0) {
            us += 1000000;
            tv->tv_sec -= 1;
        }
        tv->tv_usec = us;
    }
    return (int)rc;
}

time_t time(time_t *out) {
    struct timespec ts;
    time_t now = (time_t)-1;
    if (clock_gettime(CLOCK_REALTIME, &ts) == 0)
        now = ts.tv_sec;
    if (out != NULL)
        *out = now;
    return now;
}
