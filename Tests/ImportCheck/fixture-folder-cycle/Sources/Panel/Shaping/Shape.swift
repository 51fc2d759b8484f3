// Used by Surface (inside an interpolation); uses nothing of theirs.
public enum Shape { case line }
public enum Curve { case bend }
private struct Hub {}  // its own, not Surface's
