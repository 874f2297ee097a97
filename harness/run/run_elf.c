/* SPDX-License-Identifier: MIT */
/*
 * run_elf: what `leakgate run` needs to know about a program that ran no
 * CUnit test, to say why: is it dynamically linked (else LD_PRELOAD does
 * nothing), does it load libcunit (DT_NEEDED), and does its symbol table
 * define CUnit's functions (CUnit linked statically: nothing to
 * interpose).  Reads the file's section headers with <elf.h>; native
 * 64-bit ELF only, anything else is reported as "not ELF".  Every offset
 * is checked against the file size.
 */
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run_proto.h"

struct image {
    const unsigned char *base;
    size_t size;
};

static bool
in_image(const struct image *im, uint64_t off, uint64_t len)
{
    return off <= im->size && len <= im->size - off;
}

static const Elf64_Shdr *
section(const struct image *im, const Elf64_Ehdr *eh, size_t i)
{
    uint64_t off = eh->e_shoff + (uint64_t)i * sizeof(Elf64_Shdr);

    if (i >= eh->e_shnum || !in_image(im, off, sizeof(Elf64_Shdr)))
        return NULL;
    return (const Elf64_Shdr *)(const void *)(im->base + off);
}

/* The NUL-terminated string at offset name of string section strtab. */
static const char *
string_at(const struct image *im, const Elf64_Shdr *strtab, uint64_t name)
{
    const char *s;

    if (!strtab || name >= strtab->sh_size ||
        !in_image(im, strtab->sh_offset, strtab->sh_size))
        return NULL;
    s = (const char *)im->base + strtab->sh_offset + name;
    return memchr(s, '\0', strtab->sh_size - name) ? s : NULL;
}

/* The sanitizers whose runtime replaces malloc: the library gcc links
 * (DT_NEEDED) and the initialiser clang's static runtime defines. */
static const struct {
    const char *library;
    const char *symbol;
    const char *name;
} sanitizers[] = {
    {"libasan.so", "__asan_init", "AddressSanitizer (-fsanitize=address)"},
    {"libhwasan.so", "__hwasan_init",
     "HWAddressSanitizer (-fsanitize=hwaddress)"},
    {"libtsan.so", "__tsan_init", "ThreadSanitizer (-fsanitize=thread)"},
    {"", "__msan_init", "MemorySanitizer (-fsanitize=memory)"},
    {"liblsan.so", "__lsan_do_leak_check", "LeakSanitizer (-fsanitize=leak)"},
};

/* The first of the table's sanitizers that name matches wins (ASan's
 * runtime defines LeakSanitizer's entry points too). */
static void
note_sanitizer(struct leakgate_run_elf *out, const char *name, bool library)
{
    size_t n = sizeof sanitizers / sizeof sanitizers[0];

    for (size_t i = 0; i < n && out->sanitizer != sanitizers[i].name; i++) {
        const char *key =
            library ? sanitizers[i].library : sanitizers[i].symbol;

        if (*key && (library ? strncmp(name, key, strlen(key)) == 0
                             : strcmp(name, key) == 0)) {
            out->sanitizer = sanitizers[i].name;
            return;
        }
    }
}

static void
scan_dynamic(struct leakgate_run_elf *out,
             const struct image *im,
             const Elf64_Ehdr *eh,
             const Elf64_Shdr *sh)
{
    const Elf64_Shdr *strtab = section(im, eh, sh->sh_link);
    size_t n = sh->sh_size / sizeof(Elf64_Dyn);

    out->is_dynamic = true;
    if (!in_image(im, sh->sh_offset, sh->sh_size))
        return;
    for (size_t i = 0; i < n; i++) {
        const Elf64_Dyn *d =
            (const Elf64_Dyn *)(const void *)(im->base + sh->sh_offset) + i;
        const char *name;

        if (d->d_tag != DT_NEEDED)
            continue;
        name = string_at(im, strtab, d->d_un.d_val);
        if (name && strncmp(name, "libcunit", 8) == 0)
            out->needs_cunit = true;
        if (name)
            note_sanitizer(out, name, true);
    }
}

static void
scan_symbols(struct leakgate_run_elf *out,
             const struct image *im,
             const Elf64_Ehdr *eh,
             const Elf64_Shdr *sh)
{
    const Elf64_Shdr *strtab = section(im, eh, sh->sh_link);
    size_t n = sh->sh_size / sizeof(Elf64_Sym);

    if (!in_image(im, sh->sh_offset, sh->sh_size))
        return;
    for (size_t i = 0; i < n; i++) {
        const Elf64_Sym *s =
            (const Elf64_Sym *)(const void *)(im->base + sh->sh_offset) + i;
        const char *name;

        if (s->st_shndx == SHN_UNDEF || ELF64_ST_TYPE(s->st_info) != STT_FUNC)
            continue;
        name = string_at(im, strtab, s->st_name);
        if (name && (strcmp(name, "CU_initialize_registry") == 0 ||
                     strcmp(name, "CU_run_all_tests") == 0))
            out->has_cunit_symbols = true;
        if (name && name[0] == '_' && name[1] == '_')
            note_sanitizer(out, name, false);
    }
}

/* eh is a native 64-bit ELF header. */
static bool
native_elf(const Elf64_Ehdr *eh)
{
    return memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 &&
           eh->e_ident[EI_CLASS] == ELFCLASS64;
}

static void
inspect(struct leakgate_run_elf *out, const struct image *im)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)(const void *)im->base;

    if (im->size < sizeof *eh || !native_elf(eh))
        return;
    out->is_elf = true;
    out->is_shared = eh->e_type == ET_DYN;
    for (size_t i = 0; i < eh->e_shnum; i++) {
        const Elf64_Shdr *sh = section(im, eh, i);

        if (sh && sh->sh_type == SHT_DYNAMIC)
            scan_dynamic(out, im, eh, sh);
        else if (sh && (sh->sh_type == SHT_SYMTAB || sh->sh_type == SHT_DYNSYM))
            scan_symbols(out, im, eh, sh);
    }
}

void
leakgate_run__inspect_elf(struct leakgate_run_elf *out, const char *path)
{
    struct image im = {NULL, 0};
    struct stat st;
    void *map;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    memset(out, 0, sizeof *out);
    if (fd < 0)
        return;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map != MAP_FAILED) {
            im.base = map;
            im.size = (size_t)st.st_size;
            inspect(out, &im);
            munmap(map, im.size);
        }
    }
    close(fd);
}

bool
leakgate_run__elf_shared(const char *path)
{
    Elf64_Ehdr eh;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    bool shared;

    if (fd < 0)
        return false;
    shared = pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh &&
             native_elf(&eh) && eh.e_type == ET_DYN;
    close(fd);
    return shared;
}
