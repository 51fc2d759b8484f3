#pragma once
#include <fluidsynth.h>

// --- GLib log silencing around SoundFont loading -------------------------
// When a file is not a loadable SF2, FluidSynth tries its DLS loader
// (libinstpatch), which reports damaged files through GLib's log on stderr
// ("** (process:…): CRITICAL **: ipatch_…"). Carillon turns the failure into a
// typed error instead, so these two functions mute GLib's default-domain
// warnings for the duration of a load. GLib's own header is not included (it
// would need its include paths); the two functions are declared with GLib's
// ABI: guint g_log_set_handler(const gchar*, GLogLevelFlags, GLogFunc, gpointer)
// and void g_log_remove_handler(const gchar*, guint).

typedef void (*carillon_glog_func)(const char *domain, int level, const char *message, void *data);
unsigned int g_log_set_handler(const char *domain, int levels, carillon_glog_func handler, void *data);
void g_log_remove_handler(const char *domain, unsigned int handler_id);

static void carillon_glog_ignore(const char *domain, int level, const char *message, void *data) {
    (void)domain; (void)level; (void)message; (void)data;
}

/// Mutes GLib messages, warnings and criticals of the default (NULL) domain; returns a handle for unmute.
static inline unsigned int carillon_glib_mute(void) {
    return g_log_set_handler(0, (1 << 3) | (1 << 4) | (1 << 5), carillon_glog_ignore, 0);
}

static inline void carillon_glib_unmute(unsigned int handle) {
    if (handle) g_log_remove_handler(0, handle);
}
