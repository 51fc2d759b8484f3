/// The (key, velocity) pairs a piece plays on each preset: what a reduced
/// view of a SoundFont must keep the zones of (`SoundFontHydra.zones(playing:)`).
/// Presets are named by FluidSynth's bank (128: percussion) and program numbers.
public struct PlayedNotes: Sendable, Equatable {
    /// Per preset (`bank << 16 | program`): 128 velocities × 128 keys, bit
    /// `key % 64` of word `2 × velocity + key / 64`.
    private var sets: [UInt32: [UInt64]] = [:]

    public init() {}

    /// Records that `key` (0...127) sounds at `velocity` (1...127) on the preset.
    public mutating func insert(bank: Int, program: Int, key: Int, velocity: Int) {
        precondition((0..<128).contains(key) && (0..<128).contains(velocity))
        sets[Self.preset(bank, program), default: Self.empty][2 * velocity + key >> 6] |= 1 << UInt64(key & 63)
    }

    /// Records every key at `velocity` on the preset: for a channel whose
    /// tuning moves the key FluidSynth chooses zones by.
    public mutating func insertEveryKey(bank: Int, program: Int, velocity: Int) {
        precondition((0..<128).contains(velocity))
        sets[Self.preset(bank, program), default: Self.empty][2 * velocity] = .max
        sets[Self.preset(bank, program), default: Self.empty][2 * velocity + 1] = .max
    }

    /// True when some recorded pair of the preset has its key in `keys` and
    /// its velocity in `velocities` (bounds above 127 are clipped).
    public func contains(bank: Int, program: Int, keys: ClosedRange<Int>, velocities: ClosedRange<Int>) -> Bool {
        guard let set = sets[Self.preset(bank, program)], keys.lowerBound <= 127, velocities.lowerBound <= 127 else {
            return false
        }
        let lowKey = max(keys.lowerBound, 0), highKey = min(keys.upperBound, 127)
        let low = Self.mask(from: lowKey, to: min(highKey, 63))
        let high = Self.mask(from: max(lowKey, 64) - 64, to: highKey - 64)
        for velocity in max(velocities.lowerBound, 0)...min(velocities.upperBound, 127)
        where set[2 * velocity] & low != 0 || set[2 * velocity + 1] & high != 0 {
            return true
        }
        return false
    }

    /// True when the preset plays at all.
    public func plays(bank: Int, program: Int) -> Bool { sets[Self.preset(bank, program)] != nil }

    /// Presets played.
    public var presetCount: Int { sets.count }

    /// Distinct (preset, key, velocity) triples recorded.
    public var count: Int { sets.values.reduce(0) { $0 + $1.reduce(0) { $0 + $1.nonzeroBitCount } } }

    private static let empty = [UInt64](repeating: 0, count: 256)

    private static func preset(_ bank: Int, _ program: Int) -> UInt32 {
        UInt32(truncatingIfNeeded: bank & 0xFFFF) << 16 | UInt32(truncatingIfNeeded: program & 0xFFFF)
    }

    /// Bits `from...to` of a word (none when `to` < `from`).
    private static func mask(from: Int, to: Int) -> UInt64 {
        guard from <= to, to >= 0, from <= 63 else { return 0 }
        let width = to - from + 1
        return (width == 64 ? .max : (1 << UInt64(width)) - 1) << UInt64(from)
    }
}
