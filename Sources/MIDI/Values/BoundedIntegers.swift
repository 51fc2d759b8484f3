/// Unsigned integers narrower than a byte or a word, as MIDI 1.0 uses them.
/// An out-of-range value cannot be built: `init(_:)` traps on a programming
/// error, `init(exactly:)` returns nil for untrusted input and
/// `init(truncatingIfNeeded:)` masks, as a byte parser does.
public protocol BoundedUnsignedInteger: Hashable, Comparable, Sendable, CustomStringConvertible,
    ExpressibleByIntegerLiteral where IntegerLiteralType == Int
{
    associatedtype Storage: FixedWidthInteger & UnsignedInteger & Sendable
    static var bitWidth: Int { get }
    var value: Storage { get }
    init(unchecked value: Storage)
}

extension BoundedUnsignedInteger {
    public static var min: Self { Self(unchecked: 0) }
    public static var max: Self { Self(unchecked: Storage((1 << bitWidth) - 1)) }

    public init(_ source: some BinaryInteger) {
        guard let value = Self(exactly: source) else {
            preconditionFailure("\(source) does not fit in \(Self.bitWidth) bits")
        }
        self = value
    }

    public init?(exactly source: some BinaryInteger) {
        guard source >= 0, source < (1 << Self.bitWidth) else { return nil }
        self.init(unchecked: Storage(source))
    }

    public init(truncatingIfNeeded source: some BinaryInteger) {
        self.init(unchecked: Storage(truncatingIfNeeded: source) & Self.max.value)
    }

    public init(integerLiteral literal: Int) { self.init(literal) }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.value < rhs.value }
    public var description: String { String(value) }
    public var intValue: Int { Int(value) }
}

/// 0...15: a MIDI channel as carried in a status byte. Shown to people as 1...16.
public struct UInt4: BoundedUnsignedInteger {
    public static let bitWidth = 4
    public let value: UInt8
    public init(unchecked value: UInt8) { self.value = value }
}

/// 0...127: a note number, velocity, controller number or value, program.
public struct UInt7: BoundedUnsignedInteger {
    public static let bitWidth = 7
    public let value: UInt8
    public init(unchecked value: UInt8) { self.value = value }
}

/// 0...16383: pitch bend (centre 8192), song position, a 14-bit controller value.
public struct UInt14: BoundedUnsignedInteger {
    public static let bitWidth = 14
    public let value: UInt16
    public init(unchecked value: UInt16) { self.value = value }

    /// The centre of the range: pitch bend at rest.
    public static let midpoint = UInt14(unchecked: 8192)

    public init(msb: UInt7, lsb: UInt7) {
        self.init(unchecked: UInt16(msb.value) << 7 | UInt16(lsb.value))
    }

    public var msb: UInt7 { UInt7(unchecked: UInt8(value >> 7)) }
    public var lsb: UInt7 { UInt7(unchecked: UInt8(value & 0x7F)) }
}

/// A MIDI channel, 0-based inside, 1-based when shown (`Channel(1)` is "channel 2").
public typealias Channel = UInt4
