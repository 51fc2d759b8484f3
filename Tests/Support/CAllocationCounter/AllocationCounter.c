// Interposes the C heap for the whole test process: symbols defined in the
// executable take precedence over libc's, so every malloc in Swift, in
// FluidSynth and in libc itself passes here, then on to glibc's own entry
// points (__libc_*). Counting is per thread and off unless armed.
#include "CAllocationCounter.h"
#include <stddef.h>
#include <errno.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void __libc_free(void *pointer);
extern void *__libc_memalign(size_t alignment, size_t size);

static _Thread_local int armed;
static _Thread_local int64_t calls, frees;

void carillon_allocations_arm(void) { calls = 0; frees = 0; armed = 1; }
int64_t carillon_allocations_disarm(void) { armed = 0; return calls; }
int64_t carillon_allocations_frees(void) { return frees; }

void *malloc(size_t size) { if (armed) calls++; return __libc_malloc(size); }
void *calloc(size_t count, size_t size) { if (armed) calls++; return __libc_calloc(count, size); }
void *realloc(void *pointer, size_t size) { if (armed) calls++; return __libc_realloc(pointer, size); }
void free(void *pointer) { if (armed && pointer) { calls++; frees++; } __libc_free(pointer); }
void *memalign(size_t alignment, size_t size) { if (armed) calls++; return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { if (armed) calls++; return __libc_memalign(alignment, size); }
int posix_memalign(void **out, size_t alignment, size_t size) {
    if (armed) calls++;
    void *p = __libc_memalign(alignment, size);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}
