// The Controls module; see DESIGN.md for what it holds.
