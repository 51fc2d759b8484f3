// The hub holds a mapping: Surface → Mapping, the other way round.
public final class Hub {
    var mapping = Mapping()
    func describe() -> String { "\(Shape.self)" }
}
