/// One parameter moved to a new value, in the parameter's own unit and range
/// (see `ParameterRegistry`). Small and trivially copyable: it can cross into
/// the render thread through a queue or as an atomic `Float` bit pattern at
/// `address.index`.
public struct ParameterChange: Hashable, Sendable {
    public var address: ParameterAddress
    public var value: Float

    public init(_ address: ParameterAddress, _ value: Float) {
        self.address = address
        self.value = value
    }

    /// The dense index of `address`, for a flat array of atomics.
    public var index: Int { address.index }
}

extension ParameterChange: CustomStringConvertible {
    public var description: String { "\(address) = \(value)" }
}
