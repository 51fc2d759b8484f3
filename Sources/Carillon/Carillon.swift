// The Carillon module; see DESIGN.md for what it holds.
