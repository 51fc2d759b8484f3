public struct Definition {
    // Not uses of Shaping's Curve: the nested type of the same name, a comment, a string.
    public var curve = Curve.linear
    public var note = "Curve"
    public enum Curve { case linear }
}
