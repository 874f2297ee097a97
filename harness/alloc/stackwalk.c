/* SPDX-License-Identifier: MIT */
/*
 * stackwalk: backtraces for exact windows (stackwalk.h says why).
 *
 * A frame's rule is what libgcc's uw_frame_state_for() derives from the
 * call-frame information at an address: the CFA (rsp or rbp plus an
 * offset), where the return address and the caller's rbp are saved
 * relative to it (the caller's rsp is the CFA on x86-64).  Found the same
 * way libgcc finds it — _Unwind_Find_FDE(), then the CIE's and the FDE's
 * CFA programs run up to the address — and kept in a table keyed by that
 * address, so each return address is interpreted once per process.  A
 * rule carries the generation of the loaded modules it was derived in
 * (how many were unloaded, dl_iterate_phdr's dlpi_subs): after a dlclose
 * another library may sit at the same address.
 *
 * What the table cannot hold makes the rule "complex" and the backtrace
 * libgcc's: a signal frame ('S' augmentation), a CFA that is an expression
 * or based on another register, a return address or rsp that is not saved
 * at an offset from the CFA, a frame base the walk does not know (rbp
 * after a frame whose rule leaves it undefined).  CHECK mode compares every
 * backtrace with libgcc's: ctest runs the corpus that way.
 */
#include "stackwalk.h"

#include <link.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

/* leakgate's own copy of libgcc's unwinder, its symbols renamed
 * (cmake/LeakgateUnwinder.cmake): a test binary need not load libgcc_s. */
#ifdef LEAKGATE_OWN_UNWINDER
#define _Unwind_Backtrace leakgate_gcc__Unwind_Backtrace
#define _Unwind_GetIP leakgate_gcc__Unwind_GetIP
#define _Unwind_Find_FDE leakgate_gcc__Unwind_Find_FDE
#endif
#include <unwind.h>

#define MAX_FRAMES 256

/* ------------------------------------------------------------------ */
/* libgcc's reference walk                                              */

struct gcc_walk {
    void **vec;
    unsigned n;
    unsigned max;
    unsigned skip;
};

static _Unwind_Reason_Code
gcc_frame(struct _Unwind_Context *ctx, void *arg)
{
    struct gcc_walk *w = arg;
    void *ip = (void *)_Unwind_GetIP(ctx);

    if (w->skip > 0) {
        w->skip--;
        return _URC_NO_REASON;
    }
    if (!ip)
        return _URC_END_OF_STACK;
    w->vec[w->n++] = ip;
    return w->n == w->max ? _URC_END_OF_STACK : _URC_NO_REASON;
}

/* The stack above `skip` frames above this function's caller, exactly as
 * jemalloc's own libgcc backtrace records it. */
static __attribute__((noinline)) unsigned
gcc_backtrace(void **vec, unsigned max, unsigned skip)
{
    struct gcc_walk w = {vec, 0, max, skip + 1}; /* + this function */

    if (max > 0)
        _Unwind_Backtrace(gcc_frame, &w);
    return w.n;
}

static atomic_uint_fast64_t n_fast, n_fallback, n_checked, n_differ, n_rules;
static enum leakgate_stackwalk_mode mode = LEAKGATE_STACKWALK_FAST;
static unsigned skew_frame;

void
leakgate_stackwalk__set_mode(enum leakgate_stackwalk_mode m)
{
    mode = m;
}

void
leakgate_stackwalk__test_skew(unsigned frame)
{
    skew_frame = frame;
}

void
leakgate_stackwalk__stats(struct leakgate_stackwalk_stats *out)
{
    out->fast = atomic_load_explicit(&n_fast, memory_order_relaxed);
    out->fallback = atomic_load_explicit(&n_fallback, memory_order_relaxed);
    out->checked = atomic_load_explicit(&n_checked, memory_order_relaxed);
    out->differ = atomic_load_explicit(&n_differ, memory_order_relaxed);
    out->rules = atomic_load_explicit(&n_rules, memory_order_relaxed);
}

static void
count(atomic_uint_fast64_t *c)
{
    atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

#if defined(__x86_64__)

bool
leakgate_stackwalk__fast_available(void)
{
    return true;
}

/* libgcc's FDE lookup (unwind-dw2-fde.h), exported by libgcc_s. */
struct dwarf_eh_bases {
    void *tbase;
    void *dbase;
    void *func;
};
extern const void *_Unwind_Find_FDE(void *pc, struct dwarf_eh_bases *bases);

/* x86-64 DWARF register numbers. */
#define REG_RBP 6
#define REG_RSP 7

/* ------------------------------------------------------------------ */
/* Rules                                                                */

enum kind { K_NONE, K_RULE, K_END, K_COMPLEX };
enum how { H_SAME, H_OFFSET, H_UNDEF, H_OTHER };

struct rule {
    enum kind kind;
    bool cfa_bp;     /* CFA = rbp + cfa_off, else rsp + cfa_off */
    enum how bp_how; /* the caller's rbp: same, at CFA + bp_off, unknown */
    int32_t cfa_off; /* 24 bits in the table */
    int16_t bp_off;
    int8_t ra_off; /* the return address is at CFA + ra_off */
};

#define CFA_OFF_MAX ((1 << 23) - 1)
#define CFA_OFF_MIN (-(1 << 23))
#define GEN_MASK 0x7ffu /* 11 bits of the modules' generation */

/* Packed in one word for the table with the generation of the modules it
 * was derived in (a library unloaded since may have left its address to
 * another): 0 is "no rule yet". */
static uint64_t
pack(const struct rule *r, unsigned gen)
{
    return (uint64_t)r->kind | (uint64_t)r->cfa_bp << 2 |
           (uint64_t)r->bp_how << 3 | (uint64_t)(gen & GEN_MASK) << 5 |
           (uint64_t)(uint8_t)r->ra_off << 16 |
           (uint64_t)(uint16_t)r->bp_off << 24 |
           (uint64_t)((uint32_t)r->cfa_off & 0xffffffu) << 40;
}

static unsigned
packed_gen(uint64_t w)
{
    return (unsigned)(w >> 5) & GEN_MASK;
}

static struct rule
unpack(uint64_t w)
{
    struct rule r;
    uint32_t off = (uint32_t)(w >> 40) & 0xffffffu;

    r.kind = (enum kind)(w & 3);
    r.cfa_bp = (w >> 2) & 1;
    r.bp_how = (enum how)((w >> 3) & 3);
    r.ra_off = (int8_t)(uint8_t)(w >> 16);
    r.bp_off = (int16_t)(uint16_t)(w >> 24);
    r.cfa_off = (int32_t)(off ^ 0x800000u) - 0x800000; /* sign-extend */
    return r;
}

/* ------------------------------------------------------------------ */
/* Reading .eh_frame                                                    */

struct reader {
    const uint8_t *p;
    const uint8_t *end;
    bool bad;
};

/* A LEB128 number's bits; *bits is how many it had, *sign its sign bit. */
static uint64_t
leb(struct reader *r, unsigned *bits, bool *sign)
{
    uint64_t v = 0;
    unsigned shift = 0;
    uint8_t b;

    do {
        if (r->p >= r->end || shift > 63) {
            r->bad = true;
            *bits = 64;
            *sign = false;
            return 0;
        }
        b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
    } while (b & 0x80);
    *bits = shift;
    *sign = (b & 0x40) != 0;
    return v;
}

static uint64_t
uleb(struct reader *r)
{
    unsigned bits;
    bool sign;

    return leb(r, &bits, &sign);
}

static int64_t
sleb(struct reader *r)
{
    unsigned bits;
    bool sign;
    uint64_t v = leb(r, &bits, &sign);

    if (sign && bits < 64)
        v |= ~(uint64_t)0 << bits;
    return (int64_t)v;
}

static uint64_t
fixed(struct reader *r, size_t n)
{
    uint64_t v = 0;

    if ((size_t)(r->end - r->p) < n) {
        r->bad = true;
        return 0;
    }
    for (size_t i = 0; i < n; i++) /* little-endian */
        v |= (uint64_t)r->p[i] << (8 * i);
    r->p += n;
    return v;
}

static void
skip(struct reader *r, uint64_t n)
{
    if ((uint64_t)(r->end - r->p) < n)
        r->bad = true;
    else
        r->p += n;
}

/* Skip one pointer in DW_EH_PE encoding `enc` (its value is not needed:
 * libgcc gives the FDE's start).  False for encodings libgcc's x86-64
 * output never uses here (aligned, omit). */
static bool
skip_encoded(struct reader *r, uint8_t enc)
{
    if ((enc & 0x70) == 0x50) /* DW_EH_PE_aligned */
        return false;
    switch (enc & 0x0f) {
    case 0x00: /* absptr */
    case 0x04: /* udata8 */
    case 0x0c: /* sdata8 */ skip(r, 8); return true;
    case 0x02: /* udata2 */
    case 0x0a: /* sdata2 */ skip(r, 2); return true;
    case 0x03: /* udata4 */
    case 0x0b: /* sdata4 */ skip(r, 4); return true;
    case 0x01: /* uleb128 */ uleb(r); return true;
    case 0x09: /* sleb128 */ sleb(r); return true;
    default: return false;
    }
}

/* One row of the CFA table, for the registers the walk uses. */
struct row {
    uint64_t cfa_reg;
    int64_t cfa_off;
    bool cfa_expr;
    enum how bp_how, ra_how;
    int64_t bp_off, ra_off;
    bool sp_set; /* rsp has a rule of its own (never in GCC's output) */
};

struct program {
    uint64_t code_align;
    int64_t data_align;
    uint64_t ra_reg;
    uintptr_t loc;
    uintptr_t target;
};

static void
set_reg(struct row *row,
        const struct program *pg,
        uint64_t reg,
        enum how how,
        int64_t off)
{
    if (reg == REG_RBP) {
        row->bp_how = how;
        row->bp_off = off;
    } else if (reg == pg->ra_reg) {
        row->ra_how = how;
        row->ra_off = off;
    } else if (reg == REG_RSP) {
        row->sp_set = how != H_SAME;
    }
}

#define STATE_DEPTH 8

/*
 * Run a CFA program over row until the location passes pg->target (the
 * row at target is then in row).  Returns 1 when it stopped there, 0 at
 * the program's end, -1 for an instruction it does not know.
 */
static int
run_program(struct reader *r, struct row *row, struct program *pg)
{
    struct row saved[STATE_DEPTH];
    unsigned depth = 0;

    while (r->p < r->end && !r->bad) {
        uint8_t op = *r->p++;
        uint64_t reg, delta;
        int64_t off;

        switch (op & 0xc0) {
        case 0x40: /* advance_loc */ delta = op & 0x3f; goto advance;
        case 0x80: /* offset */
            off = (int64_t)uleb(r) * pg->data_align;
            set_reg(row, pg, op & 0x3f, H_OFFSET, off);
            continue;
        case 0xc0: /* restore: unsaved, as libgcc has it */
            set_reg(row, pg, op & 0x3f, H_SAME, 0);
            continue;
        default: break;
        }
        switch (op) {
        case 0x00: /* nop */ continue;
        case 0x02: /* advance_loc1 */ delta = fixed(r, 1); goto advance;
        case 0x03: /* advance_loc2 */ delta = fixed(r, 2); goto advance;
        case 0x04: /* advance_loc4 */ delta = fixed(r, 4); goto advance;
        case 0x05: /* offset_extended */
            reg = uleb(r);
            off = (int64_t)uleb(r) * pg->data_align;
            set_reg(row, pg, reg, H_OFFSET, off);
            continue;
        case 0x06: /* restore_extended */
        case 0x08: /* same_value */
            set_reg(row, pg, uleb(r), H_SAME, 0);
            continue;
        case 0x07: /* undefined */
            set_reg(row, pg, uleb(r), H_UNDEF, 0);
            continue;
        case 0x09: /* register */
        case 0x14: /* val_offset */
        case 0x15: /* val_offset_sf (a LEB's length is its sign's too) */
            reg = uleb(r);
            uleb(r);
            set_reg(row, pg, reg, H_OTHER, 0);
            continue;
        case 0x0a: /* remember_state (the CFA too, as libgcc does) */
            if (depth == STATE_DEPTH)
                return -1;
            saved[depth++] = *row;
            continue;
        case 0x0b: /* restore_state */
            if (depth == 0)
                return -1;
            *row = saved[--depth];
            continue;
        case 0x0c: /* def_cfa */
            row->cfa_reg = uleb(r);
            row->cfa_off = (int64_t)uleb(r);
            row->cfa_expr = false;
            continue;
        case 0x0d: /* def_cfa_register */
            row->cfa_reg = uleb(r);
            row->cfa_expr = false;
            continue;
        case 0x0e: /* def_cfa_offset (an expression stays, as in libgcc) */
            row->cfa_off = (int64_t)uleb(r);
            continue;
        case 0x0f: /* def_cfa_expression */
            skip(r, uleb(r));
            row->cfa_expr = true;
            continue;
        case 0x10: /* expression */
        case 0x16: /* val_expression */
            reg = uleb(r);
            skip(r, uleb(r));
            set_reg(row, pg, reg, H_OTHER, 0);
            continue;
        case 0x11: /* offset_extended_sf */
            reg = uleb(r);
            off = sleb(r) * pg->data_align;
            set_reg(row, pg, reg, H_OFFSET, off);
            continue;
        case 0x12: /* def_cfa_sf */
            row->cfa_reg = uleb(r);
            row->cfa_off = sleb(r) * pg->data_align;
            row->cfa_expr = false;
            continue;
        case 0x13: /* def_cfa_offset_sf (an expression stays) */
            row->cfa_off = sleb(r) * pg->data_align;
            continue;
        case 0x2e: /* GNU_args_size */ uleb(r); continue;
        case 0x2f: /* GNU_negative_offset_extended */
            reg = uleb(r);
            off = -(int64_t)uleb(r) * pg->data_align;
            set_reg(row, pg, reg, H_OFFSET, off);
            continue;
        default: /* set_loc and anything newer */ return -1;
        }
    advance:
        pg->loc += delta * pg->code_align;
        if (pg->loc > pg->target)
            return 1;
    }
    return r->bad ? -1 : 0;
}

/* A CIE's fields and initial instructions, then the FDE's instructions up
 * to target: the row libgcc would use there. */
static struct rule
derive(uintptr_t target)
{
    struct rule out = {K_COMPLEX, false, H_SAME, 0, 0, 0};
    struct dwarf_eh_bases bases;
    const uint8_t *fde = _Unwind_Find_FDE((void *)target, &bases);
    struct reader f, c;
    struct program pg;
    struct row row;
    const char *aug;
    uint8_t fde_enc = 0x00, version;
    uint32_t len, cie_off;
    bool z = false;

    if (!fde) {
        /* libgcc's x86-64 Linux fallback: code without an FDE that is a
         * rt_sigreturn trampoline (mov $15,%rax; syscall) is a signal
         * frame, and the walk goes on through it there. */
        static const uint8_t sigreturn[9] = {0x48, 0xc7, 0xc0, 0x0f, 0x00,
                                             0x00, 0x00, 0x0f, 0x05};

        if (memcmp((const void *)(target + 1), sigreturn, sizeof sigreturn) !=
            0)
            out.kind = K_END;
        return out;
    }
    memset(&row, 0, sizeof row);
    memset(&pg, 0, sizeof pg);
    /* The FDE: length, CIE pointer, start, range, augmentation data. */
    f.p = fde;
    f.end = fde + 8;
    f.bad = false;
    len = (uint32_t)fixed(&f, 4);
    if (len == 0 || len == 0xffffffffu)
        return out;
    f.end = fde + 4 + len;
    cie_off = (uint32_t)fixed(&f, 4);
    /* The CIE: length, id, version, augmentation, alignments, RA reg. */
    c.p = f.p - 4 - cie_off;
    c.end = c.p + 4;
    c.bad = false;
    len = (uint32_t)fixed(&c, 4);
    if (len == 0 || len == 0xffffffffu)
        return out;
    c.end = c.p + len;
    if (fixed(&c, 4) != 0)
        return out;
    version = (uint8_t)fixed(&c, 1);
    if (version != 1 && version != 3) /* 4 adds fields libgcc reads */
        return out;
    aug = (const char *)c.p;
    skip(&c, strnlen(aug, (size_t)(c.end - c.p)) + 1);
    if (c.bad || (aug[0] && aug[0] != 'z'))
        return out;
    pg.code_align = uleb(&c);
    pg.data_align = sleb(&c);
    pg.ra_reg = version == 1 ? fixed(&c, 1) : uleb(&c);
    if (aug[0] == 'z') {
        uint64_t n = uleb(&c);
        const uint8_t *data_end = c.p + n;

        z = true;
        for (const char *a = aug + 1; *a && !c.bad; a++) {
            if (*a == 'R')
                fde_enc = (uint8_t)fixed(&c, 1);
            else if (*a == 'L')
                fixed(&c, 1);
            else if (*a == 'P') {
                uint8_t enc = (uint8_t)fixed(&c, 1);

                if (!skip_encoded(&c, enc))
                    return out;
            } else /* 'S' (a signal frame) and anything unknown */
                return out;
        }
        if (c.bad || data_end > c.end)
            return out;
        c.p = data_end;
    }
    pg.target = target;
    pg.loc = (uintptr_t)bases.func;
    row.ra_how = H_SAME;
    row.bp_how = H_SAME;
    if (run_program(&c, &row, &pg) != 0)
        return out;
    if (!skip_encoded(&f, fde_enc) || !skip_encoded(&f, fde_enc & 0x0f))
        return out;
    if (z)
        skip(&f, uleb(&f));
    if (f.bad || run_program(&f, &row, &pg) < 0)
        return out;

    if (row.ra_how == H_UNDEF) {
        out.kind = K_END; /* the outermost frame (_start, clone) */
        return out;
    }
    if (row.cfa_expr || (row.cfa_reg != REG_RSP && row.cfa_reg != REG_RBP) ||
        row.sp_set || row.ra_how != H_OFFSET || row.cfa_off < CFA_OFF_MIN ||
        row.cfa_off > CFA_OFF_MAX || row.ra_off < INT8_MIN ||
        row.ra_off > INT8_MAX)
        return out;
    if (row.bp_how == H_OFFSET &&
        (row.bp_off < INT16_MIN || row.bp_off > INT16_MAX))
        return out;
    out.kind = K_RULE;
    out.cfa_bp = row.cfa_reg == REG_RBP;
    out.cfa_off = (int32_t)row.cfa_off;
    out.ra_off = (int8_t)row.ra_off;
    out.bp_how = row.bp_how == H_OFFSET ? H_OFFSET
                 : row.bp_how == H_SAME ? H_SAME
                                        : H_UNDEF;
    out.bp_off = (int16_t)row.bp_off;
    return out;
}

/* ------------------------------------------------------------------ */
/* The table                                                            */

/* The rules by address, in util.c's two-part table: a page for the
 * rules a small program needs, 128 KiB for the rest. */
#define SLOTS_FIRST 256 /* 4 KiB */
#define SLOTS 8192      /* 128 KiB, touched as it fills */

static struct leakgate_util__addr_slot
    first_slots[SLOTS_FIRST] LEAKGATE_LARGE_TABLE;
static struct leakgate_util__addr_slot more_slots[SLOTS] LEAKGATE_LARGE_TABLE;
static const struct leakgate_util__addr_table rules = {first_slots, SLOTS_FIRST,
                                                       more_slots, SLOTS};

/*
 * In front of the table, each thread's last rules by address, direct
 * mapped, in the form the walk reads (one word, no generation: a thread
 * empties its entries when the modules' generation changes): one load
 * and a compare for the frames of a test's loops.  Per thread, so no
 * other thread tears an entry; a signal handler's walk that interrupts
 * a walk on its thread does not touch them (hot_busy).
 */
#define HOT_SLOTS 256 /* 4 KiB per thread */
struct hot_rule {
    uintptr_t key;
    uint64_t form; /* hot_form() */
};
static __thread struct hot_rule hot[HOT_SLOTS]
    __attribute__((tls_model("initial-exec")));
static __thread unsigned hot_gen __attribute__((tls_model("initial-exec")));
static __thread bool hot_busy __attribute__((tls_model("initial-exec")));

/* A rule's hot form: cfa_off in bits 0-31, bp_off 32-47, ra_off 48-55,
 * kind 56-57, cfa_bp 58, bp_how 59-60. */
#define FORM_KIND(f) ((enum kind)((f) >> 56 & 3))
#define FORM_CFA_BP(f) (((f) >> 58 & 1) != 0)
#define FORM_BP_HOW(f) ((enum how)((f) >> 59 & 3))
#define FORM_CFA_OFF(f) ((intptr_t)(int32_t)(uint32_t)(f))
#define FORM_BP_OFF(f) ((intptr_t)(int16_t)(uint16_t)((f) >> 32))
#define FORM_RA_OFF(f) ((intptr_t)(int8_t)(uint8_t)((f) >> 48))

static uint64_t
hot_form(const struct rule *r)
{
    return (uint64_t)(uint32_t)r->cfa_off |
           (uint64_t)(uint16_t)r->bp_off << 32 |
           (uint64_t)(uint8_t)r->ra_off << 48 | (uint64_t)r->kind << 56 |
           (uint64_t)r->cfa_bp << 58 | (uint64_t)r->bp_how << 59;
}

/* rule_at()'s slow half: the table, else the call-frame information. */
static __attribute__((noinline)) uint64_t
rule_looked_up(uintptr_t target, unsigned gen)
{
    uint64_t w;
    struct rule r;

    /* 0: being filled in; another generation: from modules since
     * unloaded. */
    if (leakgate_util__addr_get(&rules, target, &w) && w &&
        packed_gen(w) == gen) {
        r = unpack(w);
        return hot_form(&r);
    }
    r = derive(target);
    w = pack(&r, gen);
    if (leakgate_util__addr_put(&rules, target, w) == 1)
        count(&n_rules);
    return hot_form(&r); /* no room around it: derived again next time */
}

/* The rule at target, in its hot form, from this thread's entries (of
 * the modules' generation gen: hot_gen), or (hot: false, a walk of a
 * signal handler inside another) from the table. */
static inline uint64_t
rule_at(uintptr_t target, unsigned gen, bool hot_own)
{
    struct hot_rule *h =
        &hot[(uint64_t)target * UINT64_C(0x9e3779b97f4a7c15) >> 56];

    if (!hot_own)
        return rule_looked_up(target, gen);
    if (h->key != target) {
        h->form = rule_looked_up(target, gen);
        h->key = target;
    }
    return h->form;
}

/* ------------------------------------------------------------------ */
/* The walk                                                             */

/* Frames this large are not a stack the walk should trust. */
#define MAX_FRAME ((uintptr_t)1 << 30)

static bool
in_frame(uintptr_t addr, uintptr_t sp, uintptr_t cfa)
{
    return addr >= sp && addr + sizeof(uintptr_t) <= cfa &&
           addr % sizeof(uintptr_t) == 0;
}

static int
note_subs(struct dl_phdr_info *info, size_t size, void *payload)
{
    (void)size;
    *(unsigned long long *)payload = info->dlpi_subs;
    return 1; /* the first module says it */
}

/* The generation of the loaded modules: how many were unloaded so far
 * (dl_iterate_phdr's dlpi_subs; ~8 ns, the loader's lock uncontended). */
static unsigned
modules_gen(void)
{
    unsigned long long subs = 0;

    dl_iterate_phdr(note_subs, &subs);
    return (unsigned)subs & GEN_MASK;
}

/* walk()'s loop: rules from this thread's entries when own. */
static __attribute__((no_sanitize("address"))) int
walk_rules(uintptr_t target,
           uintptr_t sp,
           uintptr_t bp,
           void **vec,
           unsigned max,
           const struct leakgate_stackwalk_bounds *b,
           unsigned gen,
           bool own)
{
    bool bp_known = true, lead = b->skip_end > b->skip_begin;
    unsigned n = 0;

    while (n < max) {
        uint64_t f = rule_at(target, gen, own);
        uintptr_t cfa, ra;

        if (FORM_KIND(f) == K_END)
            break;
        if (FORM_KIND(f) != K_RULE || (FORM_CFA_BP(f) && !bp_known))
            return -1;
        cfa = (FORM_CFA_BP(f) ? bp : sp) + (uintptr_t)FORM_CFA_OFF(f);
        if (cfa <= sp || cfa - sp > MAX_FRAME ||
            !in_frame(cfa + (uintptr_t)FORM_RA_OFF(f), sp, cfa))
            return -1;
        ra = *(const uintptr_t *)(cfa + (uintptr_t)FORM_RA_OFF(f));
        if (FORM_BP_HOW(f) == H_OFFSET) {
            uintptr_t at = cfa + (uintptr_t)FORM_BP_OFF(f);

            if (!in_frame(at, sp, cfa))
                return -1;
            bp = *(const uintptr_t *)at;
            bp_known = true;
        } else if (FORM_BP_HOW(f) != H_SAME) {
            bp_known = false;
        }
        sp = cfa;
        if (ra == 0)
            break;
        target = ra - 1; /* the call, as libgcc looks it up */
        if (lead && ra >= b->skip_begin && ra < b->skip_end)
            continue; /* the caller's leading frames: not wanted */
        lead = false;
        vec[n++] = (void *)ra;
        if (ra >= b->stop_begin && ra < b->stop_end)
            return (int)n; /* the caller's stop: above it, no frame is wanted */
    }
    /* libgcc reads a frame's rule before it reports the frame: a last
     * frame whose rule it cannot read is not in its backtrace. */
    if (n == max && n > 0 && FORM_KIND(rule_at(target, gen, own)) == K_COMPLEX)
        return -1;
    return (int)n;
}

/* The stack above the frame at (ip, sp, bp), return addresses only.
 * Returns the count, or -1 when a frame needs libgcc. */
static int
walk(uintptr_t ip,
     uintptr_t sp,
     uintptr_t bp,
     void **vec,
     unsigned max,
     const struct leakgate_stackwalk_bounds *b)
{
    bool own = !hot_busy; /* else a handler's walk inside another */
    unsigned gen = modules_gen();
    int rc;

    if (own) {
        hot_busy = true;
        atomic_signal_fence(memory_order_seq_cst);
        if (hot_gen != gen) { /* modules were unloaded: rules may be stale */
            memset(hot, 0, sizeof hot);
            hot_gen = gen;
        }
    }
    rc = walk_rules(ip, sp, bp, vec, max, b, gen, own);
    if (own) {
        atomic_signal_fence(memory_order_seq_cst);
        hot_busy = false;
    }
    return rc;
}

static void
report_difference(void *const *fast, unsigned nf, void *const *ref, unsigned nr)
{
    char line[256];
    unsigned i = 0;
    int n;

    while (i < nf && i < nr && fast[i] == ref[i])
        i++;
    n = snprintf(line, sizeof line,
                 "leakgate: stackwalk check: the fast walk gave %u frames, "
                 "libgcc %u; frame %u: %p against %p\n",
                 nf, nr, i, i < nf ? fast[i] : NULL, i < nr ? ref[i] : NULL);
    if (n > 0 && write(STDERR_FILENO, line, (size_t)n) < 0)
        return;
}

#endif /* x86-64 */

/* libgcc's n frames of vec as walk() keeps them: the leading ones in b's
 * skip range dropped, up to the first in its stop range (kept), at most
 * max.  Returns the count. */
static unsigned
trim(void **vec,
     unsigned n,
     unsigned max,
     const struct leakgate_stackwalk_bounds *b)
{
    unsigned i = 0, k = 0;

    while (i < n && (uintptr_t)vec[i] >= b->skip_begin &&
           (uintptr_t)vec[i] < b->skip_end)
        i++;
    for (; i < n && k < max; i++) {
        vec[k++] = vec[i];
        if ((uintptr_t)vec[i] >= b->stop_begin &&
            (uintptr_t)vec[i] < b->stop_end)
            break;
    }
    return k;
}

#if !defined(__x86_64__) /* libgcc's walk alone */
bool
leakgate_stackwalk__fast_available(void)
{
    return false;
}
#endif

/* libgcc's stack, trimmed to b (the frames it drops do not count
 * against max_len).  Inlined in the public walks: libgcc's walk skips
 * their frame. */
static inline __attribute__((always_inline)) void
libgcc_trimmed(void **vec,
               unsigned *len,
               unsigned max_len,
               const struct leakgate_stackwalk_bounds *b)
{
    void *ref[MAX_FRAMES];
    unsigned nr;

    if (max_len <= MAX_FRAMES) {
        nr = trim(ref, gcc_backtrace(ref, MAX_FRAMES, 1), max_len, b);
        memcpy(vec, ref, nr * sizeof *ref);
        *len = nr;
    } else { /* (what the caller's vec holds: no room to trim) */
        *len = trim(vec, gcc_backtrace(vec, max_len, 1), max_len, b);
    }
    count(&n_fallback);
}

/* Both public walks: inlined, so that the registers read are those of
 * the public function's frame and vec[0] its caller's return address. */
static inline __attribute__((always_inline)) void
backtrace_in(void **vec,
             unsigned *len,
             unsigned max_len,
             const struct leakgate_stackwalk_bounds *b,
             const struct leakgate_stackwalk_regs *from)
{
#if defined(__x86_64__)
    struct leakgate_stackwalk_regs r;
    void *ref[MAX_FRAMES];
    unsigned nr;
    int n;

    /* This frame's registers (ip is the instruction after the asm, whose
     * row describes the same rsp), or the caller's frame's. */
    if (from)
        r = *from;
    else
        LEAKGATE_STACKWALK_HERE(r);
    n = mode == LEAKGATE_STACKWALK_LIBGCC || max_len > MAX_FRAMES
            ? -1
            : walk(r.ip, r.sp, r.bp, vec, max_len, b);
    if (n < 0) {
        libgcc_trimmed(vec, len, max_len, b);
        return;
    }
    if (mode != LEAKGATE_STACKWALK_FAST) /* a locked add: not per malloc */
        count(&n_fast);
    if (skew_frame && (unsigned)n > skew_frame)
        vec[skew_frame] = (char *)vec[skew_frame] + 1;
    *len = (unsigned)n;
    if (mode == LEAKGATE_STACKWALK_FAST)
        return;
    nr = trim(ref, gcc_backtrace(ref, MAX_FRAMES, 1), max_len, b);
    count(&n_checked);
    if (nr == (unsigned)n && memcmp(ref, vec, nr * sizeof *ref) == 0)
        return;
    count(&n_differ);
    report_difference(vec, (unsigned)n, ref, nr);
    if (mode == LEAKGATE_STACKWALK_CHECK_ABORT)
        abort();
    memcpy(vec, ref, nr * sizeof *ref);
    *len = nr;
#else
    (void)from; /* libgcc walks from here; the skip range drops the rest */
    libgcc_trimmed(vec, len, max_len, b);
#endif
}

__attribute__((noinline)) void
leakgate_stackwalk__backtrace(void **vec, unsigned *len, unsigned max_len)
{
    static const struct leakgate_stackwalk_bounds none = {0, 0, 0, 0};

    backtrace_in(vec, len, max_len, &none, NULL);
}

__attribute__((noinline)) void
leakgate_stackwalk__backtrace_in(void **vec,
                                 unsigned *len,
                                 unsigned max_len,
                                 const struct leakgate_stackwalk_bounds *b,
                                 const struct leakgate_stackwalk_regs *r)
{
    backtrace_in(vec, len, max_len, b, r);
}
