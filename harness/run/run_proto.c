/* SPDX-License-Identifier: MIT */
/*
 * run_proto: the record format of `leakgate run`'s channel (see
 * run_proto.h): field escaping, splitting, sending without SIGPIPE, and
 * the JUnit/JSON pieces of one verdict, rendered by report.c's
 * per-window writers so that run mode writes exactly what linked mode
 * writes.  Used by both
 * sides; no state.
 */
#include "run_proto.h"

#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "error.h"

void
leakgate_run__seconds(char out[LEAKGATE_RUN_SECONDS_MAX], double s)
{
    static const char hex[] = "0123456789abcdef";
    uint64_t bits, frac;
    int exp;
    char *o = out;

    memcpy(&bits, &s, sizeof bits);
    frac = bits & (((uint64_t)1 << 52) - 1);
    exp = (int)(bits >> 52 & 0x7ff);
    if ((bits >> 63) || exp == 0x7ff || (exp == 0 && frac == 0)) {
        memcpy(out, "0x0p+0", sizeof "0x0p+0");
        return;
    }
    /* A normal number is 1.frac * 2^(exp - 1023), a subnormal one
     * 0.frac * 2^-1022. */
    memcpy(o, exp ? "0x1" : "0x0", 3);
    o += 3;
    if (frac) {
        *o++ = '.';
        for (int shift = 48; shift >= 0 && frac; shift -= 4) {
            *o++ = hex[frac >> shift & 0xf];
            frac &= ((uint64_t)1 << shift) - 1;
        }
    }
    exp = exp ? exp - 1023 : -1022;
    *o++ = 'p';
    *o++ = exp < 0 ? '-' : '+';
    {
        char digits[8];
        int n = 0;
        unsigned int e = (unsigned int)(exp < 0 ? -exp : exp);

        do
            digits[n++] = (char)('0' + e % 10);
        while ((e /= 10) != 0);
        while (n > 0)
            *o++ = digits[--n];
    }
    *o = '\0';
}

/* Wake leakgate run; false when the doorbell cannot be rung. */
static bool
ring_bell(int bell)
{
    uint64_t one = 1;

    while (write(bell, &one, sizeof one) < 0) {
        if (errno != EINTR)
            return false;
    }
    return true;
}

/* The channel is full: wake leakgate run, then wait until it has read.
 * false: no doorbell to ring (send blocking from now on). */
static bool
ring_and_wait(int fd, int bell)
{
    struct pollfd p = {fd, POLLOUT, 0};

    if (!ring_bell(bell))
        return false;
    /* Woken by room, or by leakgate run's end (the send then fails). */
    while (poll(&p, 1, -1) < 0 && errno == EINTR)
        ;
    return true;
}

/* Records sent since the doorbell last rang (ring_every()). */
static atomic_uint unrung;

/* Every LEAKGATE_RUN_RING_EVERY records the doorbell rings without
 * waiting: leakgate run reads them while the program goes on, long before
 * the channel (or the ring) is full.  A full channel lets the program
 * send again only once three quarters of it were read (the kernel's rule
 * for a Unix socket): waiting for that each time cost ~1 ms here, 14
 * times in 2,000 tests. */
static void
ring_every(int bell)
{
    if (bell >= 0 &&
        atomic_fetch_add_explicit(&unrung, 1, memory_order_relaxed) + 1 >=
            LEAKGATE_RUN_RING_EVERY) {
        atomic_store_explicit(&unrung, 0, memory_order_relaxed);
        (void)ring_bell(bell);
    }
}

int
leakgate_run__send(int fd, int bell, const char *data, size_t len)
{
    ring_every(bell);
    while (len > 0) {
        ssize_t w =
            send(fd, data, len, MSG_NOSIGNAL | (bell >= 0 ? MSG_DONTWAIT : 0));

        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && bell >= 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!ring_and_wait(fd, bell))
                bell = -1;
            continue;
        }
        if (w <= 0)
            return leakgate_error__set(
                LEAKGATE_EIO, "leakgate run's channel: %s", strerror(errno));
        data += w;
        len -= (size_t)w;
    }
    return 0;
}

/* ---- the ring ------------------------------------------------------------ */

bool
leakgate_run__ring_new(struct leakgate_run_ring **ring, int *fd)
{
    struct leakgate_run_ring *r;
    int d = memfd_create("leakgate-run", 0);

    *ring = NULL;
    *fd = -1;
    if (d < 0)
        return false;
    if (ftruncate(d, (off_t)sizeof *r) != 0) {
        close(d);
        return false;
    }
    r = mmap(NULL, sizeof *r, PROT_READ | PROT_WRITE, MAP_SHARED, d, 0);
    if (r == MAP_FAILED) {
        close(d);
        return false;
    }
    r->magic = LEAKGATE_RUN_RING_MAGIC;
    *ring = r;
    *fd = d;
    return true;
}

struct leakgate_run_ring *
leakgate_run__ring_map(int fd)
{
    struct leakgate_run_ring *r;
    struct stat st;

    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) != 0 || (size_t)st.st_size != sizeof *r) {
        close(fd);
        return NULL;
    }
    r = mmap(NULL, sizeof *r, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd); /* the map stays */
    if (r == MAP_FAILED)
        return NULL;
    {
        uint32_t none = 0;

        /* Its size is this build's (fstat() above), its magic ours. */
        if (r->magic != LEAKGATE_RUN_RING_MAGIC ||
            !atomic_compare_exchange_strong(&r->writer, &none,
                                            (uint32_t)getpid())) {
            munmap(r, sizeof *r);
            return NULL;
        }
    }
    return r;
}

void
leakgate_run__ring_unmap(struct leakgate_run_ring *ring)
{
    if (ring)
        munmap(ring, sizeof *ring);
}

/* Of n bytes at position pos of the ring, how many lie before its end
 * (the rest wrap to its start). */
static size_t
till_end(uint64_t pos, size_t n)
{
    size_t left =
        LEAKGATE_RUN_RING_BYTES - (size_t)(pos % LEAKGATE_RUN_RING_BYTES);

    return n < left ? n : left;
}

/* The ring is full: wake leakgate run, then wait a moment.  false when it
 * is gone (its end of the channel hung up). */
static bool
ring_full(int fd, int bell)
{
    struct pollfd p = {fd, 0, 0};
    /* Long enough for leakgate run to wake and read: it frees the ring
     * as soon as it has copied it.  A millisecond here was most of the
     * wall time that JUnit or JSON pieces (a kilobyte and more per
     * record: the ring holds forty) added to a run of 10,000 tests. */
    const struct timespec moment = {0, 100000};

    if (bell >= 0)
        (void)ring_bell(bell);
    /* POLLHUP and POLLERR come whatever the events asked for. */
    while (ppoll(&p, 1, &moment, NULL) < 0 && errno == EINTR)
        ;
    return !(p.revents & (POLLHUP | POLLERR | POLLNVAL));
}

int
leakgate_run__ring_write(struct leakgate_run_ring *ring,
                         int fd,
                         int bell,
                         const char *data,
                         size_t len)
{
    uint64_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);

    ring_every(bell);
    while (len > 0) {
        uint64_t tail = atomic_load_explicit(&ring->tail, memory_order_acquire);
        size_t room = LEAKGATE_RUN_RING_BYTES - (size_t)(head - tail);
        size_t at = (size_t)(head % LEAKGATE_RUN_RING_BYTES), n, first;

        if (room == 0) {
            if (!ring_full(fd, bell))
                return leakgate_error__set(LEAKGATE_EIO,
                                           "leakgate run's ring: it is gone");
            continue;
        }
        n = len < room ? len : room;
        first = till_end(head, n);
        memcpy(ring->data + at, data, first);
        memcpy(ring->data, data + first, n - first);
        head += n;
        data += n;
        len -= n;
        /* The bytes before head: leakgate run may read them now. */
        atomic_store_explicit(&ring->head, head, memory_order_release);
    }
    return 0;
}

int
leakgate_run__ring_read(struct leakgate_run_ring *ring,
                        uint64_t head,
                        struct leakgate_buf *out)
{
    uint64_t tail = atomic_load_explicit(&ring->tail, memory_order_relaxed);
    size_t n = (size_t)(head - tail),
           at = (size_t)(tail % LEAKGATE_RUN_RING_BYTES), first;

    if (n == 0)
        return 0;
    if (n > LEAKGATE_RUN_RING_BYTES) /* not a head the program wrote */
        return leakgate_error__set(LEAKGATE_EIO, "leakgate run's ring: "
                                                 "a head past its end");
    first = till_end(tail, n);
    leakgate_buf__put(out, (const char *)ring->data + at, first);
    leakgate_buf__put(out, (const char *)ring->data, n - first);
    if (out->failed)
        return leakgate_error__set(LEAKGATE_ENOMEM, "records");
    /* Read: the program may write over them. */
    atomic_store_explicit(&ring->tail, head, memory_order_release);
    return 0;
}

static bool
put_case(struct leakgate_run_pieces *out,
         const struct leakgate_verdict *v,
         const struct leakgate_report_env *env)
{
    struct leakgate_buf jc = LEAKGATE_BUF_INIT, jt = LEAKGATE_BUF_INIT;

    leakgate_report__junit_case(&jc, v, env);
    leakgate_report__json_test(&jt, v);
    out->junit_case = leakgate_buf__take(&jc);
    out->json_test = leakgate_buf__take(&jt);
    return out->junit_case && out->json_test;
}

int
leakgate_run__pieces(struct leakgate_run_pieces *out,
                     const struct leakgate_verdict *v,
                     const struct leakgate_report_env *env)
{
    struct leakgate_buf je = LEAKGATE_BUF_INIT, se = LEAKGATE_BUF_INIT;
    bool ok;

    memset(out, 0, sizeof *out);
    leakgate_report__junit_env(&je, env);
    leakgate_report__json_env(&se, env);
    out->junit_env = leakgate_buf__take(&je);
    out->json_env = leakgate_buf__take(&se);
    ok = out->junit_env && out->json_env;
    if (v)
        ok = put_case(out, v, env) && ok;
    if (!ok) {
        leakgate_run__pieces_dispose(out);
        return leakgate_error__set(LEAKGATE_ENOMEM, "rendering a record");
    }
    return 0;
}

int
leakgate_run__case_pieces(struct leakgate_run_pieces *out,
                          const struct leakgate_verdict *v,
                          const struct leakgate_report_env *env)
{
    memset(out, 0, sizeof *out);
    if (!put_case(out, v, env)) {
        leakgate_run__pieces_dispose(out);
        return leakgate_error__set(LEAKGATE_ENOMEM, "rendering a record");
    }
    return 0;
}

void
leakgate_run__pieces_dispose(struct leakgate_run_pieces *p)
{
    leakgate_util__free(p->junit_case);
    leakgate_util__free(p->json_test);
    leakgate_util__free(p->junit_env);
    leakgate_util__free(p->json_env);
    memset(p, 0, sizeof *p);
}

void
leakgate_run__case_dispose(struct leakgate_run_case *c)
{
    if (!c)
        return;
    leakgate_util__free(c->suite);
    leakgate_util__free(c->test);
    leakgate_run__pieces_dispose(&c->pieces);
    memset(c, 0, sizeof *c);
}
