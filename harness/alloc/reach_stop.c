/* SPDX-License-Identifier: MIT */
/*
 * reach_stop: the other threads held still for a scan (reach_stop.h).
 */
#include "reach_stop.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define MAX_STOPPED 512
#define RED_ZONE 128
#define WAIT_NS 1000000000LL   /* a thread may take this long to stop */
#define MAPS_BYTES (16u << 20) /* /proc/self/maps read at most */

enum { WAITING = 1, ARRIVED, LEFT, GONE };

struct stopped {
    pid_t tid;
    _Atomic int state;
    uintptr_t sp, tp;
#if defined(__x86_64__)
    greg_t regs[NGREG];
#endif
};

static struct stopped slots[MAX_STOPPED];
static int nslots;
static _Atomic int stop_gen; /* the stop in progress (its signals' value) */
static _Atomic int go;       /* futex: the stop that is over */
static int stop_sig;         /* 0: not installed */
static char *maps;           /* a reserved buffer for /proc/self/maps */

static long
futex(_Atomic int *word, int op, int value)
{
    return syscall(SYS_futex, word, op, value, NULL, NULL, 0);
}

static pid_t
tid_now(void)
{
    return (pid_t)syscall(SYS_gettid);
}

#if defined(__x86_64__)
static void
on_stop(int sig, siginfo_t *si, void *ctx)
{
    int saved_errno = errno;
    int gen = si->si_value.sival_int;
    const ucontext_t *uc = ctx;
    struct stopped *s = NULL;
    pid_t me;

    (void)sig;
    /* Only leakgate's signal of the stop in progress. */
    if (si->si_code != SI_QUEUE || si->si_pid != getpid() ||
        gen != atomic_load(&stop_gen) || atomic_load(&go) == gen) {
        errno = saved_errno;
        return;
    }
    me = tid_now();
    for (int i = 0; i < nslots && !s; i++)
        if (slots[i].tid == me)
            s = &slots[i];
    if (!s || atomic_load(&s->state) != WAITING) {
        errno = saved_errno;
        return;
    }
    memcpy(s->regs, uc->uc_mcontext.gregs, sizeof s->regs);
    s->sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
    s->tp = (uintptr_t)pthread_self(); /* the thread pointer, x86-64 glibc */
    atomic_store(&s->state, ARRIVED);
    for (int seen; (seen = atomic_load(&go)) != gen;)
        (void)futex(&go, FUTEX_WAIT_PRIVATE, seen);
    atomic_store(&s->state, LEFT);
    errno = saved_errno;
}

/* Install the handler once, and keep it: a signal that arrives late (a
 * thread that had it blocked) must not meet the default action. */
static bool
installed(void)
{
    struct sigaction now, ours;
    int sig = SIGRTMAX - 4;

    if (stop_sig)
        return true;
    if (sig <= SIGRTMIN || sigaction(sig, NULL, &now) != 0 ||
        (!(now.sa_flags & SA_SIGINFO) && now.sa_handler != SIG_DFL))
        return false; /* the program's own */
    if ((now.sa_flags & SA_SIGINFO) && now.sa_sigaction != on_stop)
        return false;
    memset(&ours, 0, sizeof ours);
    ours.sa_sigaction = on_stop;
    ours.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&ours.sa_mask);
    if (sigaction(sig, &ours, NULL) != 0)
        return false;
    stop_sig = sig;
    return true;
}
#endif

/* The process's threads but the caller, into slots (-1: cannot list, or
 * too many).  Only system calls: nothing allocates. */
static int
list_others(pid_t *tids, int max)
{
    char buf[8192];
    int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    pid_t self = tid_now();
    int n = 0;
    long got;

    if (fd < 0)
        return -1;
    while ((got = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
        for (long off = 0; off < got;) {
            const char *name = buf + off + 19; /* d_ino, d_off, reclen, type */
            unsigned short reclen;
            long tid = 0;

            memcpy(&reclen, buf + off + 16, sizeof reclen);
            off += reclen;
            if (name[0] < '0' || name[0] > '9')
                continue;
            for (const char *c = name; *c >= '0' && *c <= '9'; c++)
                tid = tid * 10 + (*c - '0');
            if ((pid_t)tid == self)
                continue;
            if (n == max) {
                close(fd);
                return -1;
            }
            tids[n++] = (pid_t)tid;
        }
    }
    close(fd);
    return got < 0 ? -1 : n;
}

bool
leakgate_reach__no_other_thread(void)
{
    pid_t tid;

    return list_others(&tid, 1) == 0;
}

/*
 * Whether thread tid may be sent the signal without a change the program
 * could see: it runs, or it waits in a call the C library or the kernel
 * restarts after a handler (SA_RESTART) -- read, write, an untimed futex
 * wait (a mutex, a condition variable, a join), waitpid, accept, recv,
 * send.  A thread in nanosleep, poll, select, epoll_wait, a timed wait
 * and the like would return EINTR early: it is not stopped, and the scan
 * says nothing (a plain run's behaviour first).  Read from
 * /proc/self/task/TID/syscall (its number, then its arguments).
 */
static bool
quiet_to_signal(pid_t tid)
{
    char path[64], buf[256];
    unsigned long long arg[6] = {0};
    const char *p = buf;
    long nr = 0;
    ssize_t len;
    int fd, k = 0;

    snprintf(path, sizeof path, "/proc/self/task/%ld/syscall", (long)tid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    len = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (len <= 0)
        return false;
    buf[len] = '\0';
    if (strncmp(buf, "running", 7) == 0)
        return true;
    if (*p < '0' || *p > '9')
        return false; /* -1: blocked outside a system call */
    while (*p >= '0' && *p <= '9')
        nr = nr * 10 + (*p++ - '0');
    for (; k < 6 && *p == ' '; k++) {
        p += 3; /* " 0x" */
        while ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))
            arg[k] =
                arg[k] * 16 + (unsigned)(*p <= '9' ? *p - '0' : *p - 'a' + 10),
            p++;
    }
    switch (nr) {
    case SYS_read:
    case SYS_write:
    case SYS_pread64:
    case SYS_pwrite64:
    case SYS_readv:
    case SYS_writev:
    case SYS_wait4:
    case SYS_waitid:
    case SYS_accept:
    case SYS_accept4:
    case SYS_recvfrom:
    case SYS_recvmsg:
    case SYS_sendto:
    case SYS_sendmsg: return true;
    case SYS_futex:
        /* FUTEX_WAIT or FUTEX_WAIT_BITSET with no timeout, or a lock. */
        switch (arg[1] & 0x7f) {
        case 0: /* FUTEX_WAIT */
        case 9: /* FUTEX_WAIT_BITSET */ return arg[3] == 0;
        case 6: /* FUTEX_LOCK_PI */ return arg[3] == 0;
        default: return false;
        }
    default: return false;
    }
}

static long long
now_ns(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void
pause_a_little(void)
{
    struct timespec t = {0, 50000};

    nanosleep(&t, NULL);
}

/* The mapping [*lo, *hi) of /proc/self/maps (read into maps) that holds
 * a; false when none does or it cannot be read. */
static bool
mapping_of(const char *text, uintptr_t a, uintptr_t *lo, uintptr_t *hi)
{
    for (const char *p = text; *p;) {
        unsigned long long s = 0, e = 0;
        const char *c = p;

        while ((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f'))
            s = s * 16 + (unsigned)(*c <= '9' ? *c - '0' : *c - 'a' + 10), c++;
        if (*c == '-')
            c++;
        while ((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f'))
            e = e * 16 + (unsigned)(*c <= '9' ? *c - '0' : *c - 'a' + 10), c++;
        if (a >= s && a < e && c[1] == 'r') {
            *lo = (uintptr_t)s;
            *hi = (uintptr_t)e;
            return true;
        }
        p = strchr(c, '\n');
        if (!p)
            break;
        p++;
    }
    return false;
}

/* /proc/self/maps, whole, into maps (NUL-terminated); false when it
 * does not fit or cannot be read. */
static bool
read_maps(void)
{
    size_t len = 0;
    ssize_t r;
    int fd;

    if (!maps) {
        void *m = mmap(NULL, MAPS_BYTES, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

        if (m == MAP_FAILED)
            return false;
        maps = m;
    }
    fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    while (len < MAPS_BYTES - 1 &&
           (r = read(fd, maps + len, MAPS_BYTES - 1 - len)) > 0)
        len += (size_t)r;
    close(fd);
    maps[len] = '\0';
    return len > 0 && len < MAPS_BYTES - 1;
}

static bool
add(struct leakgate_reach_stop_range *out,
    size_t max,
    size_t *n,
    uintptr_t lo,
    uintptr_t hi,
    int tls)
{
    if (lo >= hi)
        return true;
    if (*n == max)
        return false;
    out[*n].lo = lo;
    out[*n].hi = hi;
    out[*n].tls = tls;
    out[*n].regs = 0;
    (*n)++;
    return true;
}

/* The roots of stopped thread s. */
static bool
describe(const struct stopped *s,
         struct leakgate_reach_stop_range *out,
         size_t max,
         size_t *n,
         uintptr_t tls_below)
{
    uintptr_t lo, hi, sp = s->sp, tp = s->tp;
    uintptr_t start = sp > RED_ZONE ? sp - RED_ZONE : sp;

#if defined(__x86_64__)
    if (!add(out, max, n, (uintptr_t)s->regs, (uintptr_t)(s->regs + NGREG), 0))
        return false;
    out[*n - 1].regs = 1;
#endif
    if (!mapping_of(maps, sp, &lo, &hi))
        return false;
    if (start < lo)
        start = lo;
    /* A thread the C library made: its static TLS and descriptor are at
     * the top of its stack's mapping, right below and at its pointer. */
    if (tp >= lo && tp < hi && tp - lo >= tls_below && tp - tls_below >= start)
        return add(out, max, n, start, tp - tls_below, 0) &&
               add(out, max, n, tp - tls_below, hi, 1);
    if (!add(out, max, n, start, hi, 0))
        return false;
    /* Elsewhere (the main thread's): below its pointer, and its
     * descriptor's first page. */
    if (!mapping_of(maps, tp, &lo, &hi))
        return false;
    return add(out, max, n, tp - tls_below >= lo ? tp - tls_below : lo,
               tp + 4096 <= hi ? tp + 4096 : hi, 1);
}

int
leakgate_reach__stop_others(struct leakgate_reach_stop_range *out,
                            size_t max,
                            size_t *n,
                            uintptr_t tls_below)
{
#if defined(__x86_64__)
    pid_t tids[MAX_STOPPED], again[MAX_STOPPED];
    int count, more;
    int gen;
    long long until;
    bool ok = true;

    *n = 0;
    count = list_others(tids, MAX_STOPPED);
    if (count == 0)
        return 0;
    if (count < 0 || !installed())
        return -1;
    /* One that sleeps, polls or waits with a timeout: no stop at all. */
    for (int i = 0; i < count; i++)
        if (!quiet_to_signal(tids[i]))
            return -1;
    gen = atomic_load(&stop_gen) + 1;
    nslots = count;
    for (int i = 0; i < count; i++) {
        slots[i].tid = tids[i];
        atomic_store(&slots[i].state, WAITING);
    }
    atomic_store(&stop_gen, gen);
    for (int i = 0; i < count; i++) {
        siginfo_t info;

        memset(&info, 0, sizeof info);
        info.si_signo = stop_sig;
        info.si_code = SI_QUEUE;
        info.si_pid = getpid();
        info.si_uid = getuid();
        info.si_value.sival_int = gen;
        if (syscall(SYS_rt_tgsigqueueinfo, getpid(), tids[i], stop_sig,
                    &info) != 0)
            atomic_store(&slots[i].state, errno == ESRCH ? GONE : LEFT);
    }
    until = now_ns() + WAIT_NS;
    for (int i = 0; i < count && ok; i++) {
        while (atomic_load(&slots[i].state) == WAITING && now_ns() < until)
            pause_a_little();
        /* It did not come (it blocks the signal), or it could not be
         * sent one. */
        ok = atomic_load(&slots[i].state) == ARRIVED ||
             (atomic_load(&slots[i].state) == GONE);
    }
    /* A thread started meanwhile runs on: not a still picture. */
    more = ok ? list_others(again, MAX_STOPPED) : -1;
    for (int i = 0; ok && i < more; i++) {
        bool known = false;

        for (int k = 0; k < count && !known; k++)
            known = slots[k].tid == again[i] &&
                    atomic_load(&slots[k].state) == ARRIVED;
        ok = known;
    }
    ok = ok && more >= 0 && read_maps();
    for (int i = 0; ok && i < count; i++)
        if (atomic_load(&slots[i].state) == ARRIVED)
            ok = describe(&slots[i], out, max, n, tls_below);
    if (!ok) {
        leakgate_reach__resume_others();
        *n = 0;
        return -1;
    }
    return 0;
#else
    (void)out;
    (void)max;
    (void)tls_below;
    *n = 0;
    return -1;
#endif
}

void
leakgate_reach__resume_others(void)
{
    int gen = atomic_load(&stop_gen);
    long long until;

    if (atomic_load(&go) == gen)
        return;
    atomic_store(&go, gen);
    (void)futex(&go, FUTEX_WAKE_PRIVATE, 0x7fffffff);
    /* Each stopped thread leaves the handler before its slot is used
     * again. */
    until = now_ns() + WAIT_NS;
    for (int i = 0; i < nslots; i++)
        while (atomic_load(&slots[i].state) == ARRIVED && now_ns() < until)
            pause_a_little();
    nslots = 0;
}

void
leakgate_reach__stop_table(const void **p, size_t *n)
{
    *p = slots;
    *n = sizeof slots;
}
