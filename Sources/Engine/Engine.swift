// The Engine module; see DESIGN.md for what it holds.
