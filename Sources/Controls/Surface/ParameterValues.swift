import Parameters

/// Every parameter's value (in the table's units, by `ParameterAddress.index`):
/// the one copy the hub and its surface share. Not thread-safe: the hub's
/// lock guards it (a surface on its own: the surface's thread).
public final class ParameterValues {
    private var values: [Double]

    /// Every parameter at the table's default (a plugin slot with no row: 0).
    public init(registry: ParameterRegistry = .standard) {
        values = (0..<ParameterAddress.count).map { registry.info(at: $0)?.defaultValue ?? 0 }
    }

    public subscript(index: Int) -> Double {
        get { values[index] }
        set { values[index] = newValue }
    }

    public subscript(address: ParameterAddress) -> Double {
        get { values[address.index] }
        set { values[address.index] = newValue }
    }

    /// (index, value) of every parameter.
    var all: EnumeratedSequence<[Double]> { values.enumerated() }
}
