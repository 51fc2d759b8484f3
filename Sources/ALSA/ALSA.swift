// The ALSA module; see DESIGN.md for what it holds.
