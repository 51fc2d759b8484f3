// The C shim over Ableton Link: each function catches what Link may throw and
// turns it into a status and a message (Swift cannot catch C++ exceptions).
#include "CLink.h"

#include <ableton/Link.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>

struct clink_link {
    explicit clink_link(double bpm) : link(bpm) {}
    ableton::Link link;
};

namespace {

using micros = std::chrono::microseconds;

clink_status fail(clink_error *error, const char *function, clink_status status, const char *message) {
    if (error) {
        error->status = status;
        error->function = function;
        std::snprintf(error->message, sizeof error->message, "%s", message);
    }
    return status;
}

/// Runs `body`, turning what it throws into CLINK_EXCEPTION with the exception's text.
template <typename Body> clink_status guarded(clink_error *error, const char *function, Body body) {
    try {
        body();
        return CLINK_OK;
    } catch (const std::exception &e) {
        return fail(error, function, CLINK_EXCEPTION, e.what());
    } catch (...) {
        return fail(error, function, CLINK_EXCEPTION, "unknown exception");
    }
}

bool validTempo(double bpm) { return std::isfinite(bpm) && bpm >= CLINK_MIN_TEMPO && bpm <= CLINK_MAX_TEMPO; }
bool validQuantum(double q) { return std::isfinite(q) && q > 0; }

template <typename State> void fill(const State &s, int64_t time, double quantum, clink_session_state *out) {
    out->tempo = s.tempo();
    out->beat = s.beatAtTime(micros(time), quantum);
    out->phase = s.phaseAtTime(micros(time), quantum);
    out->is_playing = s.isPlaying();
    out->time_for_is_playing = s.timeForIsPlaying().count();
    out->time = time;
    out->quantum = quantum;
}

}  // namespace

extern "C" {

clink_link *clink_create(double bpm, clink_error *error) {
    if (!validTempo(bpm)) {
        fail(error, "clink_create", CLINK_INVALID_ARGUMENT, "tempo outside 20...999 bpm");
        return nullptr;
    }
    clink_link *link = nullptr;
    guarded(error, "clink_create", [&] { link = new clink_link(bpm); });
    return link;
}

void clink_destroy(clink_link *link) {
    try {
        delete link;  // Link's destructor leaves the session and joins its thread
    } catch (...) {
    }
}

clink_status clink_enable(clink_link *link, bool enable, clink_error *error) {
    return guarded(error, "clink_enable", [&] { link->link.enable(enable); });
}

bool clink_is_enabled(const clink_link *link) { return link->link.isEnabled(); }

clink_status clink_enable_start_stop_sync(clink_link *link, bool enable, clink_error *error) {
    return guarded(error, "clink_enable_start_stop_sync", [&] { link->link.enableStartStopSync(enable); });
}

bool clink_is_start_stop_sync_enabled(const clink_link *link) { return link->link.isStartStopSyncEnabled(); }

size_t clink_num_peers(const clink_link *link) { return link->link.numPeers(); }

int64_t clink_clock_micros(const clink_link *link) { return link->link.clock().micros().count(); }

clink_status clink_capture(const clink_link *link, int64_t time, double quantum, clink_session_state *out,
                           clink_error *error) {
    if (!validQuantum(quantum)) return fail(error, "clink_capture", CLINK_INVALID_ARGUMENT, "quantum not > 0");
    return guarded(error, "clink_capture",
                   [&] { fill(link->link.captureAppSessionState(), time, quantum, out); });
}

clink_status clink_time_at_beat(const clink_link *link, double beat, double quantum, int64_t *out,
                                clink_error *error) {
    if (!validQuantum(quantum) || !std::isfinite(beat))
        return fail(error, "clink_time_at_beat", CLINK_INVALID_ARGUMENT, "quantum not > 0 or beat not finite");
    return guarded(error, "clink_time_at_beat",
                   [&] { *out = link->link.captureAppSessionState().timeAtBeat(beat, quantum).count(); });
}

clink_status clink_set_tempo(clink_link *link, double bpm, int64_t time, clink_error *error) {
    if (!validTempo(bpm)) return fail(error, "clink_set_tempo", CLINK_INVALID_ARGUMENT, "tempo outside 20...999 bpm");
    return guarded(error, "clink_set_tempo", [&] {
        auto state = link->link.captureAppSessionState();
        state.setTempo(bpm, micros(time));
        link->link.commitAppSessionState(state);
    });
}

clink_status clink_request_beat_at_time(clink_link *link, double beat, int64_t time, double quantum,
                                        clink_error *error) {
    if (!validQuantum(quantum) || !std::isfinite(beat))
        return fail(error, "clink_request_beat_at_time", CLINK_INVALID_ARGUMENT, "quantum not > 0 or beat not finite");
    return guarded(error, "clink_request_beat_at_time", [&] {
        auto state = link->link.captureAppSessionState();
        state.requestBeatAtTime(beat, micros(time), quantum);
        link->link.commitAppSessionState(state);
    });
}

clink_status clink_set_is_playing_and_request_beat_at_time(clink_link *link, bool is_playing, int64_t time,
                                                           double beat, double quantum, clink_error *error) {
    if (!validQuantum(quantum) || !std::isfinite(beat))
        return fail(error, "clink_set_is_playing_and_request_beat_at_time", CLINK_INVALID_ARGUMENT,
                    "quantum not > 0 or beat not finite");
    return guarded(error, "clink_set_is_playing_and_request_beat_at_time", [&] {
        auto state = link->link.captureAppSessionState();
        state.setIsPlayingAndRequestBeatAtTime(is_playing, micros(time), beat, quantum);
        link->link.commitAppSessionState(state);
    });
}

clink_status clink_request_beat_at_start_playing_time(clink_link *link, double beat, double quantum,
                                                      clink_error *error) {
    if (!validQuantum(quantum) || !std::isfinite(beat))
        return fail(error, "clink_request_beat_at_start_playing_time", CLINK_INVALID_ARGUMENT,
                    "quantum not > 0 or beat not finite");
    return guarded(error, "clink_request_beat_at_start_playing_time", [&] {
        auto state = link->link.captureAppSessionState();
        state.requestBeatAtStartPlayingTime(beat, quantum);
        link->link.commitAppSessionState(state);
    });
}

clink_status clink_capture_audio(const clink_link *link, int64_t time, double quantum, clink_session_state *out) {
    if (!validQuantum(quantum)) return CLINK_INVALID_ARGUMENT;
    // Realtime-safe by Link's documentation: no lock, no allocation; nothing here throws.
    fill(link->link.captureAudioSessionState(), time, quantum, out);
    return CLINK_OK;
}

}  // extern "C"
