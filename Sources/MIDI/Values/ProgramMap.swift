/// A table from programs to programs (`render --program-map`): what a
/// program change selects instead. Programs are 0-based, as in MIDI data
/// (General MIDI's 0 is Acoustic Grand Piano, 40 Violin); a program the
/// table does not name maps to itself.
public struct ProgramMap: Hashable, Sendable {
    private var table: [UInt7]

    /// The identity: every program to itself.
    public init() { table = (0...127).map { UInt7($0) } }

    public subscript(program: UInt7) -> UInt7 {
        get { table[Int(program.value)] }
        set { table[Int(program.value)] = newValue }
    }

    /// Every program maps to itself.
    public var isIdentity: Bool { table.indices.allSatisfy { Int(table[$0].value) == $0 } }
}
