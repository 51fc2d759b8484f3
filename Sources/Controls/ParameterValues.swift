import Parameters

/// Every parameter's value (in the table's units, by `ParameterAddress.index`):
/// the one copy the hub and its surface share. Not thread-safe: the hub's
/// lock guards it (a surface on its own: the surface's thread).
public final class ParameterValues {
    private var values: [Double]
    /// Per index: a parameter the table had when these were made, or one set since.
    /// A plugin's parameter registered later (another session's reload, a test
    /// beside this one) is not a start value here until it is set.
    private var known: [Bool]

    /// Every parameter at the table's default (a plugin slot with no row: 0).
    public init(registry: ParameterRegistry = .standard) {
        values = (0..<ParameterAddress.count).map { registry.info(at: $0)?.defaultValue ?? 0 }
        known = (0..<ParameterAddress.count).map { registry.info(at: $0) != nil }
    }

    public subscript(index: Int) -> Double {
        get { values[index] }
        set { values[index] = newValue; known[index] = true }
    }

    public subscript(address: ParameterAddress) -> Double {
        get { values[address.index] }
        set { values[address.index] = newValue; known[address.index] = true }
    }

    /// (index, value) of every parameter the table had at the start or that was set since.
    var all: [(offset: Int, element: Double)] {
        values.indices.compactMap { known[$0] ? ($0, values[$0]) : nil }
    }
}
