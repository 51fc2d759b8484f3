// The FluidSynth module; see DESIGN.md for what it holds.
