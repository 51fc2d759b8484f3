#pragma once
#include <alsa/asoundlib.h>
#include <errno.h>
#include <string.h>

// Swift cannot call the function-like macros of <alsa/seqmid.h> and
// <alsa/seq_event.h>; each one it needs is a prefixed `static inline` here,
// named after the macro it stands for, with the same effect.

/// snd_seq_ev_clear: zero the whole event record.
static inline void carillon_seq_ev_clear(snd_seq_event_t *ev) { memset(ev, 0, sizeof(*ev)); }

/// snd_seq_ev_set_direct: deliver now, not through a queue.
static inline void carillon_seq_ev_set_direct(snd_seq_event_t *ev) { ev->queue = SND_SEQ_QUEUE_DIRECT; }

/// snd_seq_ev_set_subs: broadcast to the subscribers of the source port.
static inline void carillon_seq_ev_set_subs(snd_seq_event_t *ev) {
    ev->dest.client = SND_SEQ_ADDRESS_SUBSCRIBERS;
    ev->dest.port = SND_SEQ_ADDRESS_UNKNOWN;
}

/// snd_seq_ev_set_dest: send to one client:port.
static inline void carillon_seq_ev_set_dest(snd_seq_event_t *ev, unsigned char client, unsigned char port) {
    ev->dest.client = client;
    ev->dest.port = port;
}

/// snd_seq_ev_set_source: the sending port of our own client.
static inline void carillon_seq_ev_set_source(snd_seq_event_t *ev, unsigned char port) { ev->source.port = port; }

/// snd_seq_ev_set_fixed: a fixed-size event (every event but SysEx).
static inline void carillon_seq_ev_set_fixed(snd_seq_event_t *ev) {
    ev->flags &= ~SND_SEQ_EVENT_LENGTH_MASK;
    ev->flags |= SND_SEQ_EVENT_LENGTH_FIXED;
}

/// snd_seq_ev_set_sysex: a SysEx event whose bytes (F0 … F7 included) live at `data`.
static inline void carillon_seq_ev_set_sysex(snd_seq_event_t *ev, unsigned int len, void *data) {
    ev->type = SND_SEQ_EVENT_SYSEX;
    ev->flags &= ~SND_SEQ_EVENT_LENGTH_MASK;
    ev->flags |= SND_SEQ_EVENT_LENGTH_VARIABLE;
    ev->data.ext.len = len;
    ev->data.ext.ptr = data;
}

/// snd_seq_ev_is_variable: does the event carry external (variable-length) data?
static inline int carillon_seq_ev_is_variable(const snd_seq_event_t *ev) {
    return (ev->flags & SND_SEQ_EVENT_LENGTH_MASK) == SND_SEQ_EVENT_LENGTH_VARIABLE;
}

// alsa-lib prints its own diagnostics ("ALSA lib seq_hw.c:466: …") to stderr.
// Carillon reports every failure as a typed error instead; Swift cannot
// write the variadic handler type, so the silent handler lives here.
static void carillon_alsa_quiet_error_handler(const char *file, int line, const char *function, int err,
                                              const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

/// snd_lib_error_set_handler with a handler that prints nothing.
static inline void carillon_silence_alsa_lib_errors(void) {
    snd_lib_error_set_handler(carillon_alsa_quiet_error_handler);
}
