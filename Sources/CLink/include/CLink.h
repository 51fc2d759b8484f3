// A plain C face on Ableton Link (header-only C++, Debian's ableton-link-dev), for Swift.
// Link's own C++ stays in CLink.cpp; nothing here is Link's code.
//
// Times are Link's clock: microseconds of CLOCK_MONOTONIC_RAW (`clink_clock_micros`).
// Every call that can fail returns a `clink_status` and, on failure, fills `error`
// (may be NULL) with what failed; no C++ exception leaves this library.
//
// Threads: `clink_capture_audio` is the one call for a real-time thread (it wraps
// Link's captureAudioSessionState, documented realtime-safe, and must only ever be
// called from that one thread). Everything else is for the application's threads:
// Link documents enable, start/stop sync and the app session state as not realtime-safe.
#ifndef CLINK_H
#define CLINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum clink_status {
    CLINK_OK = 0,
    /// An argument out of what Link takes (a tempo outside 20…999 bpm, a quantum ≤ 0, NaN).
    CLINK_INVALID_ARGUMENT = 1,
    /// Link threw: a system error (sockets, threads), out of memory, anything else.
    CLINK_EXCEPTION = 2,
} clink_status;

typedef struct clink_error {
    /// Why (never CLINK_OK once filled).
    clink_status status;
    /// The shim function that failed, e.g. "clink_create".
    const char *function;
    /// What Link (or the check) said; NUL-terminated.
    char message[256];
} clink_error;

/// A Link instance (Link's `ableton::Link`), opaque.
typedef struct clink_link clink_link;

/// Link's session state read at one time for one quantum.
typedef struct clink_session_state {
    /// The session's tempo, bpm.
    double tempo;
    /// The beat at `time` (its magnitude is this instance's; its phase in the quantum is the session's).
    double beat;
    /// The session's phase at `time`, in [0, quantum).
    double phase;
    /// Start/stop: the session's transport is playing, from `time_for_is_playing`.
    bool is_playing;
    int64_t time_for_is_playing;
    /// When (Link's clock, µs) and for which quantum this was read.
    int64_t time;
    double quantum;
} clink_session_state;

/// Link's tempo range (bpm): what `clink_set_tempo` accepts.
#define CLINK_MIN_TEMPO 20.0
#define CLINK_MAX_TEMPO 999.0

/// A new Link instance at `bpm`, not yet enabled (not in any session). NULL on failure.
clink_link *clink_create(double bpm, clink_error *error);
/// Leaves the session (if enabled) and frees the instance. NULL is allowed.
void clink_destroy(clink_link *link);

/// Joins (true) or leaves (false) the session on the network.
clink_status clink_enable(clink_link *link, bool enable, clink_error *error);
bool clink_is_enabled(const clink_link *link);
/// Shares start/stop with the peers that also enable it.
clink_status clink_enable_start_stop_sync(clink_link *link, bool enable, clink_error *error);
bool clink_is_start_stop_sync_enabled(const clink_link *link);
/// Peers in the session besides this one. Realtime-safe.
size_t clink_num_peers(const clink_link *link);
/// Link's clock now, µs. Realtime-safe.
int64_t clink_clock_micros(const clink_link *link);

/// The session's state at `time` for `quantum` (application thread).
clink_status clink_capture(const clink_link *link, int64_t time, double quantum, clink_session_state *out,
                           clink_error *error);
/// The time (Link's clock, µs) of `beat` for `quantum` (application thread).
clink_status clink_time_at_beat(const clink_link *link, double beat, double quantum, int64_t *out,
                                clink_error *error);
/// Sets the session's tempo, from `time` on, and shares it with the peers (application thread).
clink_status clink_set_tempo(clink_link *link, double bpm, int64_t time, clink_error *error);
/// Maps `beat` to `time` for `quantum` — at once when alone, else at the next time with the
/// same phase (Link's quantized launch) — and commits it (application thread).
clink_status clink_request_beat_at_time(clink_link *link, double beat, int64_t time, double quantum,
                                        clink_error *error);
/// Sets start/stop (playing or not at `time`) and maps `beat` to that time for `quantum`
/// (application thread).
clink_status clink_set_is_playing_and_request_beat_at_time(clink_link *link, bool is_playing, int64_t time,
                                                           double beat, double quantum, clink_error *error);
/// When the session starts playing, maps `beat` to that time (no-op while stopped).
clink_status clink_request_beat_at_start_playing_time(clink_link *link, double beat, double quantum,
                                                      clink_error *error);

/// The session's state at `time` for `quantum`, from the audio thread: Link's
/// captureAudioSessionState (realtime-safe; call it from one real-time thread only).
/// Returns CLINK_INVALID_ARGUMENT (and leaves `out` alone) for a quantum ≤ 0 or NaN.
clink_status clink_capture_audio(const clink_link *link, int64_t time, double quantum, clink_session_state *out);

#ifdef __cplusplus
}
#endif

#endif
