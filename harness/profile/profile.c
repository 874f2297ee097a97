/* SPDX-License-Identifier: MIT */
/*
 * profile: jemalloc control through mallctl.  Translates mallctl's errno
 * convention into leakgate codes at each call site.  mallctl is looked up
 * in the process (dlsym), not linked: a lean process (the test binary
 * links leakgate without jemalloc) has none, and says so
 * (leakgate_profile__jemalloc()).
 */
#include "profile.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "files.h"
#include "intercept.h"
#include "jesize.h"

/*
 * Exact mode: every allocation sampled (lg_prof_sample:0), raw counts
 * (prof_unbias:false, FACTS "Exactness"), recording off until the gate
 * opens a window.  jemalloc reads this symbol once, before main; it is seen
 * because the executable (or a library ahead of libjemalloc) defines it.
 */
LEAKGATE_API const char *malloc_conf =
    "prof:true,prof_active:false,lg_prof_sample:0,prof_unbias:false";

typedef int (*mallctl_fn)(const char *, void *, size_t *, void *, size_t);
typedef int (*nametomib_fn)(const char *, size_t *, size_t *);

static mallctl_fn ctl_fn;
static nametomib_fn nametomib;
static bool looked_up;

/* jemalloc's mallctl and mallctlnametomib, as the process resolves them,
 * looked up once (NULL: no jemalloc in this process). */
static void
find_mallctl(void)
{
    void *f, *g;

    if (looked_up)
        return;
    looked_up = true;
    /* A lean process (leakgate's allocation wrappers found the C
     * library's malloc) has no jemalloc: no lookup, which would fail
     * (the dynamic linker's error path, in every process).  Asking for
     * the wrappers' next malloc makes them look it up first. */
    if (leakgate_intercept__next_malloc() && leakgate_jesize__lean())
        return;
    f = dlsym(RTLD_DEFAULT, "mallctl");
    g = dlsym(RTLD_DEFAULT, "mallctlnametomib");
    if (!f || !g)
        return;
    memcpy(&nametomib, &g, sizeof g);
    memcpy(&ctl_fn, &f, sizeof f);
}

const char *
leakgate_profile__sanitizer(void)
{
    /* Each runtime's initialiser, defined whether it is linked
     * statically (clang) or as a shared library (gcc). */
    static const char *const runtimes[][2] = {
        {"__asan_init", "AddressSanitizer (-fsanitize=address)"},
        {"__hwasan_init", "HWAddressSanitizer (-fsanitize=hwaddress)"},
        {"__msan_init", "MemorySanitizer (-fsanitize=memory)"},
        {"__tsan_init", "ThreadSanitizer (-fsanitize=thread)"},
        {"__lsan_do_leak_check", "LeakSanitizer (-fsanitize=leak)"},
    };

    for (size_t i = 0; i < sizeof runtimes / sizeof runtimes[0]; i++) {
        if (dlsym(RTLD_DEFAULT, runtimes[i][0]))
            return runtimes[i][1];
    }
    leakgate_error__clear(); /* dlsym's failures are not ours to report */
    return NULL;
}

bool
leakgate_profile__valgrind(void)
{
    const char *preload = getenv("LD_PRELOAD");

    return preload && strstr(preload, "vgpreload");
}

bool
leakgate_profile__jemalloc(void)
{
    find_mallctl();
    return ctl_fn != NULL;
}

static int
mallctl(const char *name, void *old, size_t *oldlen, void *new, size_t newlen)
{
    find_mallctl();
    return ctl_fn ? ctl_fn(name, old, oldlen, new, newlen) : ENOENT;
}

static int
mallctlnametomib(const char *name, size_t *mib, size_t *miblen)
{
    find_mallctl();
    return nametomib ? nametomib(name, mib, miblen) : ENOENT;
}

static int
read_bool(const char *name, bool *out)
{
    size_t sz = sizeof *out;

    return mallctl(name, out, &sz, NULL, 0);
}

/* The address of mallctl as an object pointer (ISO C has no direct cast). */
const void *
leakgate_profile__mallctl(void)
{
    const void *p;

    find_mallctl();
    memcpy(&p, &ctl_fn, sizeof p);
    return p;
}

/*
 * Does a call to malloc reach jemalloc?  jemalloc's per-thread allocation
 * counter must move when this thread allocates; a preloaded allocator or a
 * sanitizer would leave it still.  (Comparing symbol lookups is not
 * enough: some interposers keep jemalloc's malloc visible to dlsym.)
 */
static bool
malloc_reaches_jemalloc(void)
{
    volatile uint64_t *allocatedp = NULL;
    size_t sz = sizeof allocatedp;
    uint64_t before;
    void *volatile p;

    if (mallctl("thread.allocatedp", &allocatedp, &sz, NULL, 0) != 0 ||
        !allocatedp)
        return false;
    before = *allocatedp;
    p = malloc(4096);
    free(p);
    return *allocatedp != before;
}

static const char *
module_of(const void *addr)
{
    Dl_info info;

    if (!addr || !dladdr(addr, &info) || !info.dli_fname)
        return "?";
    return info.dli_fname;
}

/* Is fn leakgate's allocation wrapper (intercept.c), this copy's or
 * another's (a linked test binary under `leakgate run`)? */
static bool
leakgate_wrapper(const void *fn, bool *ours)
{
    uintptr_t start, end;
    Dl_info info;
    void *h;
    bool yes;

    leakgate_intercept__range(&start, &end);
    *ours = (uintptr_t)fn >= start && (uintptr_t)fn < end;
    if (*ours)
        return true;
    if (!fn || !dladdr(fn, &info) || !info.dli_fname)
        return false;
    h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        return false;
    yes = dlsym(h, "leakgate_alloc_wrappers") != NULL;
    dlclose(h);
    return yes;
}

/* The value of `key` in conf as its last setting has it: written to val
 * (truncated); false when conf does not set it. */
static bool
conf_value(char *val, size_t valsz, const char *conf, const char *key)
{
    size_t klen = strlen(key);
    bool found = false;

    for (const char *p = conf; p && *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);

        if (len > klen && strncmp(p, key, klen) == 0 && p[klen] == ':') {
            size_t n = len - klen - 1 < valsz - 1 ? len - klen - 1 : valsz - 1;

            memcpy(val, p + klen + 1, n);
            val[n] = '\0';
            found = true;
        }
        p += len + (end ? 1 : 0);
    }
    return found;
}

/* Whether text is a number jemalloc reads as 0 (its option parser takes
 * any C base: "0", "00", "0x0"). */
static bool
is_zero(const char *text)
{
    char *end = NULL;
    unsigned long long n;

    errno = 0;
    n = strtoull(text, &end, 0);
    return errno == 0 && end != text && *end == '\0' && n == 0;
}

bool
leakgate_profile__conf_inexact(char *out, size_t outsz, const char *conf)
{
    static const struct {
        const char *key;
        const char *exact; /* the one value that keeps counts exact; NULL:
                              a number that must be 0 */
    } keys[] = {
        {"lg_prof_sample", NULL},
        {"prof_unbias", "false"},
        {"prof", "true"},
    };
    char val[64];

    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        if (conf_value(val, sizeof val, conf, keys[i].key) &&
            !(keys[i].exact ? strcmp(val, keys[i].exact) == 0 : is_zero(val))) {
            snprintf(out, outsz, "%s:%s", keys[i].key, val);
            return true;
        }
    }
    return false;
}

int
leakgate_profile__inexact_error(const char *setting)
{
    const char *env = getenv("MALLOC_CONF");
    char in_env[80] = "";

    /* The user's MALLOC_CONF wins over leakgate's malloc_conf: name the
     * setting as written there. */
    if (leakgate_profile__conf_inexact(in_env, sizeof in_env, env) &&
        strcmp(in_env, "prof:false") == 0)
        return leakgate_error__set(
            LEAKGATE_ENOPROF,
            "MALLOC_CONF sets prof:false: jemalloc heap profiling is off, "
            "and leakgate cannot measure; remove prof:false from "
            "MALLOC_CONF");
    if (in_env[0])
        return leakgate_error__set(
            LEAKGATE_ENOPROF,
            "MALLOC_CONF sets %s: jemalloc would not count every "
            "allocation, and leakgate judges exact counts only "
            "(lg_prof_sample:0, prof_unbias:false; sampled counts miss "
            "small leaks); remove %s from MALLOC_CONF",
            in_env, in_env);
    return leakgate_error__set(
        LEAKGATE_ENOPROF,
        "jemalloc does not count every allocation in this process (%s, "
        "set by the program's own malloc_conf or /etc/malloc.conf): "
        "leakgate judges exact counts only (lg_prof_sample:0, "
        "prof_unbias:false; sampled counts miss small leaks)",
        setting);
}

int
leakgate_profile__check_conf(void)
{
    char setting[80];

    if (leakgate_profile__conf_inexact(setting, sizeof setting,
                                       getenv("MALLOC_CONF")))
        return leakgate_profile__inexact_error(setting);
    return 0;
}

int
leakgate_profile__check(struct leakgate_profile_info *out)
{
    bool prof = false;
    size_t lg = 0, sz = sizeof lg;
    const char *version = "unknown";
    size_t vsz = sizeof version;
    void *jemalloc_malloc;
    bool foreign, ours;
    char setting[80];

    memset(out, 0, sizeof *out);
    /* malloc must be jemalloc's (or leakgate's own wrapper of it,
     * intercept.c): compare with the definition that the jemalloc library
     * itself exports, and see that an allocation reaches jemalloc. */
    jemalloc_malloc = dlsym(RTLD_DEFAULT, "malloc");
    /* leakgate's wrapper calls the next malloc: that one must be
     * jemalloc's, or another copy's wrapper (a linked test binary under
     * `leakgate run`), known by where its allocations lead. */
    if (leakgate_wrapper(jemalloc_malloc, &ours) && ours)
        jemalloc_malloc = (void *)(uintptr_t)leakgate_intercept__next_malloc();
    foreign = leakgate_wrapper(jemalloc_malloc, &ours) && !ours;
    if ((foreign || strcmp(module_of(jemalloc_malloc),
                           module_of(leakgate_profile__mallctl())) == 0) &&
        !malloc_reaches_jemalloc()) {
        bool vg = leakgate_profile__valgrind();

        /* The symbol is jemalloc's, but allocations go elsewhere: malloc
         * is replaced at run time (valgrind redirects it). */
        return leakgate_error__set(
            LEAKGATE_ENOPROF,
            "allocations in this process do not reach jemalloc: %s replaces "
            "malloc at run time.  leakgate measures leaks itself: run the "
            "gated tests without it; to compare, run %s on a build "
            "without leakgate",
            vg ? "valgrind" : "something (valgrind, a preloaded allocator)",
            vg ? "valgrind" : "it");
    }
    if ((!foreign && strcmp(module_of(jemalloc_malloc),
                            module_of(leakgate_profile__mallctl())) != 0) ||
        !malloc_reaches_jemalloc())
        return leakgate_error__set(
            LEAKGATE_ENOPROF,
            "malloc in this process comes from %s, not from jemalloc (%s): "
            "link the test with leakgate (which links libjemalloc) and do "
            "not preload another allocator or build with a sanitizer",
            module_of(jemalloc_malloc), module_of(leakgate_profile__mallctl()));
    if (read_bool("opt.prof", &prof) != 0 || !prof)
        return leakgate_error__set(
            LEAKGATE_ENOPROF,
            "jemalloc heap profiling is off in this process (opt.prof is "
            "false): leakgate turns it on through malloc_conf; remove "
            "'prof:false' from MALLOC_CONF, or run the binary with "
            "MALLOC_CONF=prof:true");
    if (mallctl("opt.lg_prof_sample", &lg, &sz, NULL, 0) != 0)
        lg = 0;
    out->lg_sample = (unsigned int)lg;
    /* jemalloc 5.3 has no mallctl for prof_unbias (ENOENT): what the
     * environment says is all there is to read. */
    if (read_bool("opt.prof_unbias", &out->unbias) != 0)
        out->unbias = leakgate_profile__conf_inexact(setting, sizeof setting,
                                                     getenv("MALLOC_CONF")) &&
                      strncmp(setting, "prof_unbias:", 12) == 0;
    if (out->lg_sample != 0 || out->unbias) {
        if (out->lg_sample != 0)
            snprintf(setting, sizeof setting, "lg_prof_sample:%u",
                     out->lg_sample);
        else
            snprintf(setting, sizeof setting, "prof_unbias:true");
        return leakgate_profile__inexact_error(setting);
    }
    if (mallctl("version", &version, &vsz, NULL, 0) != 0)
        version = "unknown";
    out->version = version;
    return 0;
}

int
leakgate_profile__set_backtrace(void (*fn)(void **, unsigned *, unsigned))
{
    int rc = mallctl("experimental.hooks.prof_backtrace", NULL, NULL, &fn,
                     sizeof fn);

    if (rc != 0)
        return leakgate_error__set(
            LEAKGATE_ENOPROF,
            "mallctl(\"experimental.hooks.prof_backtrace\"): %s", strerror(rc));
    return 0;
}

int
leakgate_profile__set_active(bool on)
{
    int rc = mallctl("prof.active", NULL, NULL, &on, sizeof on);

    if (rc != 0)
        return leakgate_error__set(
            LEAKGATE_ENOPROF, "mallctl(\"prof.active\"): %s", strerror(rc));
    return 0;
}

int
leakgate_profile__live_bytes(uint64_t *out)
{
    uint64_t epoch = 1;
    size_t allocated = 0, sz = sizeof allocated;

    if (mallctl("epoch", NULL, NULL, &epoch, sizeof epoch) != 0 ||
        mallctl("stats.allocated", &allocated, &sz, NULL, 0) != 0)
        return leakgate_error__set(LEAKGATE_ENOPROF,
                                   "mallctl(\"stats.allocated\") failed");
    *out = allocated;
    return 0;
}

static int
open_tempfile(void)
{
    const char *dir = leakgate_files__tmpdir(NULL);
    char tmpl[PATH_MAX];
    int fd;

    if (snprintf(tmpl, sizeof tmpl, "%s/leakgate-XXXXXX", dir) >=
        (int)sizeof tmpl)
        return -1;
    fd = mkstemp(tmpl);
    if (fd >= 0)
        unlink(tmpl);
    return fd;
}

/* A new descriptor for d (its text is kept).  Allocates nothing. */
static int
dumpfile_fd(struct leakgate_dumpfile *d)
{
    struct stat st;

    d->fd = memfd_create("leakgate-heap", MFD_CLOEXEC);
    if (d->fd < 0)
        d->fd = open_tempfile();
    if (d->fd < 0)
        return leakgate_error__set(LEAKGATE_EIO,
                                   "cannot create an in-memory dump file "
                                   "(memfd_create and $TMPDIR both failed: "
                                   "%s)",
                                   strerror(errno));
    snprintf(d->path, sizeof d->path, "/proc/self/fd/%d", d->fd);
    if (access(d->path, W_OK) != 0) {
        int err = errno;

        leakgate_profile__dumpfile_close(d);
        return leakgate_error__set(LEAKGATE_EIO,
                                   "%s is not usable (%s): leakgate needs "
                                   "/proc mounted",
                                   "/proc/self/fd", strerror(err));
    }
    if (fstat(d->fd, &st) == 0) {
        d->dev = st.st_dev;
        d->ino = st.st_ino;
    }
    return 0;
}

int
leakgate_profile__dumpfile_open(struct leakgate_dumpfile *d)
{
    memset(d, 0, sizeof *d);
    return dumpfile_fd(d);
}

/* A test that closes every descriptor from 3 (a daemon's close-all
 * helper) closes d's too, and a file it opens may take the number: the
 * dump then goes to a new descriptor (the old number is not ours to
 * close).  Allocates nothing. */
static int
dumpfile_check(struct leakgate_dumpfile *d)
{
    struct stat st;

    if (d->fd >= 0 && fstat(d->fd, &st) == 0 && st.st_dev == d->dev &&
        st.st_ino == d->ino)
        return 0;
    return dumpfile_fd(d);
}

int
leakgate_profile__dump(struct leakgate_dumpfile *d)
{
    const char *path = d->path;
    int rc = dumpfile_check(d);

    if (rc < 0)
        return rc;
    rc = mallctl("prof.dump", NULL, NULL, &path, sizeof path);

    if (rc == ENOENT)
        return leakgate_error__set(LEAKGATE_ENOPROF,
                                   "mallctl(\"prof.dump\"): profiling is "
                                   "off in this process");
    if (rc != 0)
        return leakgate_error__set(LEAKGATE_EDUMP,
                                   "mallctl(\"prof.dump\") to %s failed: %s",
                                   path, strerror(rc));
    return 0;
}

int
leakgate_profile__dump_ready(const struct leakgate_dumpfile *d)
{
    size_t mib[2], miblen = 2;
    bool prof = false;

    /* What a probe dump would prove, asked of jemalloc and the kernel
     * without writing ~10 KiB of profile and /proc/self/maps (a probe
     * dump cost one of the five dumps of a one-test process). */
    if (read_bool("opt.prof", &prof) != 0 || !prof ||
        mallctlnametomib("prof.dump", mib, &miblen) != 0)
        return leakgate_error__set(LEAKGATE_ENOPROF,
                                   "mallctl(\"prof.dump\"): profiling is "
                                   "off in this process");
    if (access(d->path, W_OK) != 0)
        return leakgate_error__set(LEAKGATE_EDUMP,
                                   "mallctl(\"prof.dump\") cannot write %s: %s",
                                   d->path, strerror(errno));
    return 0;
}

int
leakgate_profile__dumpfile_read(struct leakgate_dumpfile *d)
{
    struct stat st;
    size_t size, got = 0;

    if (fstat(d->fd, &st) != 0)
        return leakgate_error__set(LEAKGATE_EIO, "fstat of dump file: %s",
                                   strerror(errno));
    size = (size_t)st.st_size;
    if (size > d->cap) {
        char *p = leakgate_util__realloc(d->text, size);

        if (!p)
            return leakgate_error__set(LEAKGATE_ENOMEM,
                                       "%zu bytes for a heap dump", size);
        d->text = p;
        d->cap = size;
    }
    while (got < size) {
        ssize_t n = pread(d->fd, d->text + got, size - got, (off_t)got);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return leakgate_error__set(LEAKGATE_EIO, "reading dump file: %s",
                                       n < 0 ? strerror(errno)
                                             : "unexpected end");
        got += (size_t)n;
    }
    d->len = size;
    return 0;
}

void
leakgate_profile__dumpfile_close(struct leakgate_dumpfile *d)
{
    if (d->fd >= 0)
        close(d->fd);
    leakgate_util__free(d->text);
    memset(d, 0, sizeof *d);
    d->fd = -1;
}

struct range_search {
    const char *prefix;
    const void *addr;
    bool by_addr;
    struct leakgate_range *ranges;
    size_t n;
    size_t cap;
    bool failed;
};

static bool
module_matches(const struct dl_phdr_info *info, const struct range_search *s)
{
    const char *base;

    if (s->by_addr) {
        uintptr_t a = (uintptr_t)s->addr;

        for (size_t i = 0; i < info->dlpi_phnum; i++) {
            const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
            uintptr_t start = info->dlpi_addr + ph->p_vaddr;

            if (ph->p_type == PT_LOAD && a >= start && a < start + ph->p_memsz)
                return true;
        }
        return false;
    }
    if (!info->dlpi_name || !*info->dlpi_name)
        return false;
    base = strrchr(info->dlpi_name, '/');
    base = base ? base + 1 : info->dlpi_name;
    return strncmp(base, s->prefix, strlen(s->prefix)) == 0;
}

static int
collect_ranges(struct dl_phdr_info *info, size_t size, void *payload)
{
    struct range_search *s = payload;

    (void)size;
    if (!module_matches(info, s))
        return 0;
    for (size_t i = 0; i < info->dlpi_phnum && !s->failed; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

        if (ph->p_type != PT_LOAD)
            continue;
        if (s->n == s->cap) {
            size_t cap = s->cap ? s->cap * 2 : 8;
            struct leakgate_range *r =
                leakgate_util__realloc(s->ranges, cap * sizeof *r);

            if (!r) {
                s->failed = true;
                break;
            }
            s->ranges = r;
            s->cap = cap;
        }
        s->ranges[s->n].start = info->dlpi_addr + ph->p_vaddr;
        s->ranges[s->n].end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        s->n++;
    }
    return 0;
}

int
leakgate_profile__module_ranges(struct leakgate_range **out,
                                size_t *n,
                                const char *basename_prefix,
                                const void *addr)
{
    struct range_search s = {basename_prefix, addr, false, NULL, 0, 0, false};

    dl_iterate_phdr(collect_ranges, &s);
    if (!s.failed && s.n == 0 && addr) {
        s.by_addr = true;
        dl_iterate_phdr(collect_ranges, &s);
    }
    if (s.failed) {
        leakgate_util__free(s.ranges);
        *out = NULL;
        *n = 0;
        return leakgate_error__set(LEAKGATE_ENOMEM, "module ranges");
    }
    *out = s.ranges;
    *n = s.n;
    return 0;
}

int
leakgate_profile__allocator_ranges(struct leakgate_range **out, size_t *n)
{
    return leakgate_profile__module_ranges(out, n, "libjemalloc.",
                                           leakgate_profile__mallctl());
}

/* One profile of the n stacks g, then the mappings. */
static void
synthesize(struct leakgate_buf *out,
           const struct leakgate_profile_stack *g,
           size_t n,
           const struct leakgate_buf *maps)
{
    unsigned long long objs = 0, bytes = 0;

    for (size_t i = 0; i < n; i++) {
        if (g[i].npcs > 0) {
            objs += g[i].objs;
            bytes += g[i].bytes;
        }
    }
    leakgate_buf__printf(out, "heap_v2/1\n  t*: %llu: %llu [0: 0]\n", objs,
                         bytes);
    if (objs > 0)
        leakgate_buf__printf(out, "  t0: %llu: %llu [0: 0]\n", objs, bytes);
    for (size_t i = 0; i < n; i++) {
        if (g[i].npcs == 0)
            continue;
        leakgate_buf__puts(out, "@");
        for (size_t k = 0; k < g[i].npcs; k++)
            leakgate_buf__printf(out, " 0x%llx",
                                 (unsigned long long)g[i].pcs[k]);
        leakgate_buf__printf(
            out,
            "\n  t*: %llu: %llu [0: 0]\n"
            "  t0: %llu: %llu [0: 0]\n",
            (unsigned long long)g[i].objs, (unsigned long long)g[i].bytes,
            (unsigned long long)g[i].objs, (unsigned long long)g[i].bytes);
    }
    leakgate_buf__puts(out, "\nMAPPED_LIBRARIES:\n");
    leakgate_buf__put(out, maps->ptr ? maps->ptr : "", maps->len);
}

int
leakgate_profile__synthesize_pair(struct leakgate_buf *before,
                                  struct leakgate_buf *after,
                                  const struct leakgate_profile_stack *g,
                                  size_t n)
{
    struct leakgate_buf maps = LEAKGATE_BUF_INIT;
    int rc =
        leakgate_files__read(&maps, "/proc/self/maps", 64u << 20, "mappings");

    if (rc < 0)
        return rc;
    synthesize(before, NULL, 0, &maps);
    synthesize(after, g, n, &maps);
    leakgate_buf__dispose(&maps);
    return before->failed || after->failed
               ? leakgate_error__set(LEAKGATE_ENOMEM, "heap profile")
               : 0;
}
