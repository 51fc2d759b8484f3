// Mapping holds the surface's definitions: Mapping → Surface.
public struct Mapping {
    public var definitions: [Definition] = []
}
