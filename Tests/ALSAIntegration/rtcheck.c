/* rtcheck: LD_PRELOAD interposer that checks the real-time rules of the
 * thread that plays audio (the one calling snd_pcm_writei).
 *
 * Between two snd_pcm_writei calls of a thread lies one block of the render
 * loop (render, then write). From that thread's 10th write on, every malloc,
 * calloc, realloc, free, pthread_mutex_lock (and how many of those had to
 * wait: the trylock failed) between two writes is counted. Work before the
 * loop (set-up) and after the last write (shutdown: drain, close) is not.
 * At exit it prints to stderr:
 *   rtcheck: blocks=N allocations=N frees=N locks=N lock-waits=N [first offenders]
 * Built and used by scripts/test-alsa-vm (gcc -shared -fPIC -O2 rtcheck.c -ldl);
 * scripts/test-jack uses it for JACK's process callback (see below). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <alsa/asoundlib.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

#define TLS __thread __attribute__((tls_model("initial-exec")))
static TLS long writes, p_alloc, p_free, p_lock, p_wait;
static TLS void *p_where;
static TLS int busy;

static atomic_long blocks, allocs, frees, locks, waits;
#define MAX_OFFENDERS 2
static void *offenders[MAX_OFFENDERS];
static atomic_int n_offenders;

static void note_alloc(void *caller) {
    if (busy) return;
    p_alloc++;
    if (!p_where) p_where = caller;
}

void *malloc(size_t n) { note_alloc(__builtin_return_address(0)); return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { note_alloc(__builtin_return_address(0)); return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { note_alloc(__builtin_return_address(0)); return __libc_realloc(p, n); }
void free(void *p) {
    if (p && !busy) {
        p_free++;
        if (!p_where) p_where = __builtin_return_address(0);
    }
    __libc_free(p);
}

int pthread_mutex_lock(pthread_mutex_t *m) {
    static int (*real_lock)(pthread_mutex_t *);
    static int (*real_trylock)(pthread_mutex_t *);
    if (!real_lock) {
        real_lock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_lock");
        real_trylock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_trylock");
    }
    if (busy) return real_lock(m);
    p_lock++;
    if (real_trylock(m) == 0) return 0;
    p_wait++;
    return real_lock(m);
}

/* One block of this thread ended: add what it did to the totals (from its 10th block on), start the next. */
static void close_block(void) {
    if (++writes > 10) {
        atomic_fetch_add(&blocks, 1);
        atomic_fetch_add(&allocs, p_alloc);
        atomic_fetch_add(&frees, p_free);
        atomic_fetch_add(&locks, p_lock);
        atomic_fetch_add(&waits, p_wait);
        if (p_where && (p_alloc || p_free)) {
            int i = atomic_fetch_add(&n_offenders, 1);
            if (i < MAX_OFFENDERS) offenders[i] = p_where;
        }
    }
    p_alloc = p_free = p_lock = p_wait = 0;
    p_where = NULL;
}

snd_pcm_sframes_t snd_pcm_writei(snd_pcm_t *pcm, const void *buffer, snd_pcm_uframes_t size) {
    static snd_pcm_sframes_t (*real)(snd_pcm_t *, const void *, snd_pcm_uframes_t);
    if (!real) real = (snd_pcm_sframes_t (*)(snd_pcm_t *, const void *, snd_pcm_uframes_t))dlsym(RTLD_NEXT, "snd_pcm_writei");
    /* What happened since the previous write of this thread was one block. */
    close_block();
    /* Inside the write itself (alsa-lib, the kernel call) counts too: it is part of the block. */
    return real(pcm, buffer, size);
}

/* JACK (scripts/test-jack): a block is one call of the client's process
 * callback; libjack's own work between calls is not counted. The callback is
 * wrapped when the client sets it (one client per process). Declared here
 * rather than from <jack/jack.h>, so the ALSA VM build needs no JACK headers. */
typedef int (*jack_process_fn)(unsigned int nframes, void *arg);
static jack_process_fn client_process;
static void *client_arg;

static int counted_process(unsigned int nframes, void *unused) {
    (void)unused;
    p_alloc = p_free = p_lock = p_wait = 0;
    p_where = NULL;
    int rc = client_process(nframes, client_arg);
    close_block();
    return rc;
}

int jack_set_process_callback(void *client, jack_process_fn process, void *arg) {
    static int (*real)(void *, jack_process_fn, void *);
    if (!real) real = (int (*)(void *, jack_process_fn, void *))dlsym(RTLD_NEXT, "jack_set_process_callback");
    client_process = process;
    client_arg = arg;
    return real(client, process ? counted_process : NULL, NULL);
}

__attribute__((destructor)) static void report(void) {
    busy = 1;
    fprintf(stderr, "rtcheck: pid=%d blocks=%ld allocations=%ld frees=%ld locks=%ld lock-waits=%ld",
            (int)getpid(), (long)blocks, (long)allocs, (long)frees, (long)locks, (long)waits);
    int n = n_offenders < MAX_OFFENDERS ? n_offenders : MAX_OFFENDERS;
    for (int i = 0; i < n; i++) {
        Dl_info info;
        if (dladdr(offenders[i], &info) && info.dli_sname)
            fprintf(stderr, " [%s+%#lx]", info.dli_sname, (unsigned long)((char *)offenders[i] - (char *)info.dli_saddr));
        else if (dladdr(offenders[i], &info) && info.dli_fname)
            fprintf(stderr, " [%s+%#lx]", info.dli_fname, (unsigned long)((char *)offenders[i] - (char *)info.dli_fbase));
        else
            fprintf(stderr, " [%p]", offenders[i]);
    }
    fprintf(stderr, "\n");
}
