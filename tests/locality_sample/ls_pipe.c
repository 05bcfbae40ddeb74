/* Long writes of sampled memory into a slow reader: the call blocks while the kernel
 * copies, and meanwhile the sampler closes pages of the buffer for samples. Each call
 * must still write everything, in order (fault.c repeats a write cut short at such a page).
 *   ls_pipe        write(), writev() into a pipe; send(), sendmsg() into a stream socket pair
 *                  (a pipe stops at the closed page, a socket at the start of its chunk)
 * Prints "<call> <written> of <size>, read <n>, wrong <k>" per call; exit 1 when short. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define N (2048 * 4096L)

static int fds[2];
static long got, wrong;

static char byte_at(long i) { return (char)(i * 7 + i / 4096); }

/* reads slowly (a pause every 64 KiB), so the writer blocks on a full pipe many times */
static void *reader(void *arg) {
    (void)arg;
    static char b[4096];
    long off = 0;
    for (;;) {
        ssize_t r = read(fds[0], b, sizeof b);
        if (r <= 0) break;
        for (ssize_t i = 0; i < r; i++) wrong += b[i] != byte_at(off + i);
        off += r;
        if ((off & 65535) < r) usleep(200);
    }
    got = off;
    return NULL;
}

static int transfer(const char *what, int socket) {
    char *buf = malloc(N);
    for (long i = 0; i < N; i++) buf[i] = byte_at(i);
    usleep(20000); /* samples close some of buf's pages before the call */
    if (socket ? socketpair(AF_UNIX, SOCK_STREAM, 0, fds) : pipe(fds)) return 1;
    got = wrong = 0;
    pthread_t t;
    pthread_create(&t, NULL, reader, NULL);
    struct iovec v[3] = {{buf, 100}, {buf + 100, N / 2 - 100}, {buf + N / 2, N / 2}};
    ssize_t w;
    if (strcmp(what, "write") == 0) {
        w = write(fds[1], buf, N);
    } else if (strcmp(what, "writev") == 0) {
        w = writev(fds[1], v, 3);
    } else if (strcmp(what, "send") == 0) {
        w = send(fds[1], buf, N, 0);
    } else {
        struct msghdr m = {.msg_iov = v, .msg_iovlen = 3};
        w = sendmsg(fds[1], &m, 0);
    }
    close(fds[1]);
    pthread_join(t, NULL);
    close(fds[0]);
    free(buf);
    printf("%s %zd of %ld, read %ld, wrong %ld\n", what, w, N, got, wrong);
    return w != N || got != N || wrong != 0;
}

int main(void) {
    int bad = transfer("write", 0);
    bad |= transfer("writev", 0);
    bad |= transfer("send", 1);
    bad |= transfer("sendmsg", 1);
    return bad;
}
