import MIDI

/// Note names as a keyboard player writes them: middle C is C4 = 60, so C-1 = 0,
/// C3 = 48 and G9 = 127. A letter A…G (any case), then any number of `#` or `b`,
/// then the octave (-1…9); or a plain number 0…127.
public enum NoteName {
    /// The note `text` names, or nil when it is not a note name or is outside 0…127.
    public static func parse(_ text: Substring) -> UInt7? {
        let t = text.trimmingSpaces
        if let n = Int(t) { return (0...127).contains(n) ? UInt7(n) : nil }
        guard let first = t.first else { return nil }
        let classes: [Character: Int] = ["c": 0, "d": 2, "e": 4, "f": 5, "g": 7, "a": 9, "b": 11]
        guard let pitchClass = classes[Character(first.lowercased())] else { return nil }
        var rest = t.dropFirst()
        var accidental = 0
        while let c = rest.first, c == "#" || c == "b" || c == "B" || c == "♯" || c == "♭" {
            accidental += (c == "#" || c == "♯") ? 1 : -1
            rest = rest.dropFirst()
        }
        guard let octave = Int(rest), (-1...9).contains(octave) else { return nil }
        let n = (octave + 1) * 12 + pitchClass + accidental
        return (0...127).contains(n) ? UInt7(n) : nil
    }

    public static func parse(_ text: String) -> UInt7? { parse(text[...]) }

    /// The name of `note` with sharps: 60 → "C4", 61 → "C#4", 0 → "C-1".
    public static func name(of note: UInt7) -> String {
        let names = ["C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B"]
        let n = note.intValue
        return names[n % 12] + String(n / 12 - 1)
    }

    /// Why `text` is not a range `LOW..HIGH` of notes, or the range.
    public static func parseRange(_ text: String) -> Result<ClosedRange<UInt7>, RangeError> {
        let parts = text.split(separator: "..", omittingEmptySubsequences: false)
        if parts.count == 1 {
            guard let n = parse(parts[0]) else { return .failure(.unknownNote(String(parts[0].trimmingSpaces))) }
            return .success(n...n)
        }
        guard parts.count == 2 else { return .failure(.notARange) }
        guard let lo = parse(parts[0]) else { return .failure(.unknownNote(String(parts[0].trimmingSpaces))) }
        guard let hi = parse(parts[1]) else { return .failure(.unknownNote(String(parts[1].trimmingSpaces))) }
        guard lo <= hi else { return .failure(.backwards(lo, hi)) }
        return .success(lo...hi)
    }

    public enum RangeError: Error, Equatable {
        case notARange
        case unknownNote(String)
        case backwards(UInt7, UInt7)

        public var message: String {
            switch self {
            case .notARange: "a key range is LOW..HIGH, e.g. C-1..B2 or 0..47"
            case .unknownNote(let t):
                "unknown note '\(t)' (a number 0...127, or a name from C-1 to G9 with middle C = C4 = 60, e.g. C#4, Db4)"
            case .backwards(let lo, let hi):
                "key range is backwards: \(NoteName.name(of: lo)) (\(lo)) is above \(NoteName.name(of: hi)) (\(hi))"
            }
        }
    }
}

extension Substring {
    var trimmingSpaces: Substring {
        var s = self
        while let c = s.first, c == " " || c == "\t" { s = s.dropFirst() }
        while let c = s.last, c == " " || c == "\t" { s = s.dropLast() }
        return s
    }
}
