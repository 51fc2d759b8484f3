#pragma once
#include <jack/jack.h>
#include <jack/midiport.h>

/* jack_client_open is variadic (its optional server name): Swift cannot call
 * a C variadic function, so this one fixed-argument twin opens a client on
 * the default server ($JACK_DEFAULT_SERVER, else "default"). */
static inline jack_client_t *carillon_jack_client_open(const char *name, jack_options_t options, jack_status_t *status) {
    return jack_client_open(name, options, status);
}

/* The port type names are string macros; one accessor each keeps the spelling in libjack's header. */
static inline const char *carillon_jack_audio_type(void) { return JACK_DEFAULT_AUDIO_TYPE; }
static inline const char *carillon_jack_midi_type(void) { return JACK_DEFAULT_MIDI_TYPE; }
