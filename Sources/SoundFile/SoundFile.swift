// The SoundFile module; see DESIGN.md for what it holds.
