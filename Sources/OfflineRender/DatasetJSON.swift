import Foundation

/// The one way JSON is written and read for datasets: the manifest's lines
/// (`ManifestEntry`), the stems report (`StemReport`) and the JSON labels
/// (`RenderLabels`, `--labels-format jsonl`) are Codable types through one
/// Foundation `JSONEncoder` and one `JSONDecoder` (issue 28; the figures that
/// chose them over a writer of Carillon's own: Benchmarks/README.md, "JSON").
///
/// Bytes repeat: keys sorted (`.sortedKeys`; an object's keys are otherwise in
/// hash order, which changes from run to run), `/` left as it is, a Double in
/// Swift's shortest round-trip form (`-23.5`, `1e-05`; a whole number without
/// `.0`: `-23`), strings as UTF-8 with `"`, `\` and control characters escaped.
/// JSON has no ±∞ or NaN: every Double goes through an `OrNull` field (the
/// manifest's synthesised Codable) or `encodeNumber` (hand-written ones), which
/// write them as null (a silent stem's loudness, −∞ LUFS). Any thread.
public enum DatasetJSON {
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
    private static let decoder = JSONDecoder()

    /// `value` as one line of JSON (no newline).
    public static func line(_ value: some Encodable) -> String {
        do {
            return String(decoding: try encoder.encode(value), as: UTF8.self)
        } catch {
            // Only a non-finite Double can fail, and every one goes through `OrNull` or `encodeNumber`.
            preconditionFailure("a dataset JSON value could not be encoded: \(error)")
        }
    }

    /// The value one JSON text holds; nil when it is not JSON or not that value.
    public static func decode<Value: Decodable>(_ type: Value.Type, from text: some StringProtocol) -> Value? {
        try? decoder.decode(type, from: Data(text.utf8))
    }
}

extension KeyedEncodingContainer {
    /// A number, or null when it is absent or not finite (JSON has no ±∞ or NaN).
    public mutating func encodeNumber(_ value: Double?, forKey key: Key) throws {
        if let value, value.isFinite { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }
}

/// A field the dataset JSON always writes: its value, or null when it is
/// absent or a non-finite number (JSON has no ±∞ or NaN); null or a missing
/// key reads back as nil. With it the compiler synthesises a type's Codable
/// (its own leaves an absent optional out, and fails on a non-finite Double).
@propertyWrapper
public struct OrNull<Value: DatasetJSONValue>: Codable, Sendable, Equatable {
    public var wrappedValue: Value?

    public init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        wrappedValue = c.decodeNil() ? nil : try c.decode(Value.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        if let wrappedValue, wrappedValue.isRepresentableInJSON { try c.encode(wrappedValue) } else { try c.encodeNil() }
    }
}

/// What an `OrNull` field holds: a value JSON can write (a Double only when finite).
public protocol DatasetJSONValue: Codable, Sendable, Equatable {
    var isRepresentableInJSON: Bool { get }
}

extension DatasetJSONValue {
    public var isRepresentableInJSON: Bool { true }
}

extension Double: DatasetJSONValue {
    public var isRepresentableInJSON: Bool { isFinite }
}
extension Int: DatasetJSONValue {}
extension String: DatasetJSONValue {}
extension Array: DatasetJSONValue where Element: DatasetJSONValue {}

extension KeyedDecodingContainer {
    /// An `OrNull` field whose key is missing reads as nil (the synthesised
    /// decoder calls this overload rather than failing on the missing key).
    public func decode<Value>(_ type: OrNull<Value>.Type, forKey key: Key) throws -> OrNull<Value> {
        try decodeIfPresent(type, forKey: key) ?? OrNull(wrappedValue: nil)
    }
}
