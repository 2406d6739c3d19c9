/* LD_PRELOAD shim for bench/flood.sh: every IPv4 socket a program connects is bound first to
 * the address in BIND_SOURCE, so a tool with no source-address option (wrk) can play a second
 * client on this machine: 127.0.0.2 is loopback too, and nginx counts it apart from 127.0.0.1.
 *
 *   cc -shared -fPIC -o bind-source.so bench/bind-source.c -ldl
 *   BIND_SOURCE=127.0.0.2 LD_PRELOAD=./bind-source.so wrk …
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>

int connect(int fd, const struct sockaddr *addr, socklen_t len) {
    static int (*real_connect)(int, const struct sockaddr *, socklen_t);
    if (!real_connect) real_connect = (int (*)(int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT, "connect");
    const char *source = getenv("BIND_SOURCE");
    if (source && addr && addr->sa_family == AF_INET) {
        struct sockaddr_in from = {.sin_family = AF_INET};
        if (inet_pton(AF_INET, source, &from.sin_addr) == 1) {
            /* Port 0: the kernel picks one. A failure leaves the default source. */
            bind(fd, (const struct sockaddr *)&from, sizeof from);
        }
    }
    return real_connect(fd, addr, len);
}
