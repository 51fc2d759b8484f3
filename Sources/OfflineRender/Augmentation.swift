import Engine
import MIDI
import MappingFiles

/// `render --transpose`, `--tempo`, `--velocity-scale`, `--program-map` and
/// `--seed`: what a batch changes in each piece before it renders, for
/// dataset augmentation. A value is fixed or a range; a range is drawn for
/// each file from the seed and the file's key (its path below the batch's
/// root, see `BatchPlan.gather`), never from its place in the batch, so a
/// file gets the same draw whatever the list's order, the shard or `--jobs`,
/// and the same seed gives the same bytes.
public struct Augmentation: Sendable, Equatable {
    /// One number, or a range drawn from per file.
    public enum Value<Number: Comparable & Sendable>: Sendable, Equatable {
        case fixed(Number)
        case range(ClosedRange<Number>)

        public var isRange: Bool { if case .range = self { true } else { false } }

        /// Both ends (a fixed value twice).
        public var bounds: ClosedRange<Number> {
            switch self {
            case .fixed(let v): v...v
            case .range(let r): r
            }
        }
    }

    /// Semitones; drawn uniformly among the whole numbers of a range.
    public var transpose: Value<Int> = .fixed(0)
    /// The speed: 2 plays twice as fast (every tempo doubled).
    public var tempo: Value<Double> = .fixed(1)
    /// Note-on velocities are multiplied by this.
    public var velocityScale: Value<Double> = .fixed(1)
    public var programMap: ProgramMap? = nil
    /// The program map's file as given (for the manifest).
    public var programMapName: String? = nil
    /// `--timbres`: each track's instrument drawn (see `TimbreDraw`); nil: as the file has it.
    public var timbres: TimbreSource? = nil
    public var seed: UInt64 = 0

    public init() {}

    public static let transposeLimits = -48...48
    public static let tempoLimits = 0.25...4.0
    /// Above 0, up to 4.
    public static let velocityScaleLimit = 4.0

    /// Reals are drawn in steps of 0.001 (1 / this), so the manifest's number is the one applied.
    static let realSteps = 1000.0

    /// What one file gets.
    public struct Draw: Sendable, Equatable {
        public var seed: UInt64
        public var transpose: Int
        public var tempo: Double
        public var velocityScale: Double
        public var programMap: ProgramMap?
        public var programMapName: String?
        /// `--timbres`: the file's draw of its tracks' instruments.
        public var timbres: TimbreDraw? = nil

        public init(seed: UInt64 = 0, transpose: Int = 0, tempo: Double = 1, velocityScale: Double = 1,
                    programMap: ProgramMap? = nil, programMapName: String? = nil) {
            self.seed = seed; self.transpose = transpose; self.tempo = tempo; self.velocityScale = velocityScale
            self.programMap = programMap; self.programMapName = programMapName
        }

        /// Whether the score's notes or programs change (not only its tempo).
        var changesEvents: Bool { transpose != 0 || velocityScale != 1 || !(programMap?.isIdentity ?? true) }

        /// The velocity a note-on (above 0) gets: scaled, rounded, kept within 1...127,
        /// so a note-on never turns into a note-off.
        public func scaled(velocity: UInt8) -> UInt8 {
            guard velocityScale != 1 else { return velocity }
            return UInt8(min(127, max(1, (Double(velocity) * velocityScale).rounded())))
        }
    }

    /// The file's draw: each range drawn from its own stream, seeded by the
    /// seed, the option's name and the file's key (64-bit FNV-1a, as `Shard`
    /// hashes keys; not Swift's per-process `Hasher`), so adding one range
    /// leaves the others' draws as they were.
    public func draw(forKey key: String) -> Draw {
        func stream(_ name: String) -> SplitMix64 { SplitMix64(seed: Shard.fnv1a64("\(seed)\u{1F}\(name)\u{1F}\(key)")) }
        var d = Draw(seed: seed, programMap: programMap, programMapName: programMapName)
        d.timbres = timbres.map { TimbreDraw(source: $0, seed: seed, key: key) }
        switch transpose {
        case .fixed(let v): d.transpose = v
        case .range(let r):
            var g = stream("transpose")
            d.transpose = r.lowerBound + Int(g.next(below: UInt64(r.upperBound - r.lowerBound) + 1))
        }
        func real(_ value: Value<Double>, _ name: String) -> Double {
            switch value {
            case .fixed(let v): return v
            case .range(let r):
                var g = stream(name)
                let v = r.lowerBound + (r.upperBound - r.lowerBound) * g.nextUnit()
                return min(r.upperBound, max(r.lowerBound, (v * Self.realSteps).rounded() / Self.realSteps))
            }
        }
        d.tempo = real(tempo, "tempo")
        d.velocityScale = real(velocityScale, "velocity-scale")
        return d
    }

    /// Some value is drawn (`--seed` has something to do).
    public var hasRange: Bool { transpose.isRange || tempo.isRange || velocityScale.isRange || timbres != nil }

    // MARK: Reading the command line's values

    /// `--seed` given with nothing to draw: the CLI's and the C ABI's message.
    public static let seedWithoutDraw = "--seed draws the ranges of --transpose, --tempo or --velocity-scale (A..B) and --timbres, and none is given"
    public static let timbresEmpty = "--timbres takes 'per-track' or a pool file's name"

    /// `--timbres per-track`, or the pool file `text` names (read now: a
    /// mistake in it is the error, each as `file:line:column: error: …`).
    public static func timbreSource(_ text: String) throws(MappingError) -> TimbreSource {
        if text == "per-track" { return .perTrack }
        return .pool(try TimbrePoolFile.load(path: text), name: text)
    }

    /// "N" or "A..B" (A ≤ B not checked: see `Value.bounds`), whole numbers; nil when unreadable.
    public static func integers(_ text: String) -> Value<Int>? {
        guard let (a, b) = ends(text) else { return Int(text).map { .fixed($0) } }
        guard let low = Int(a), let high = Int(b), low <= high else { return nil }
        return .range(low...high)
    }

    /// "X" or "A..B" (A ≤ B), finite reals; nil when unreadable.
    public static func reals(_ text: String) -> Value<Double>? {
        func number(_ s: Substring) -> Double? { Double(s).flatMap { $0.isFinite ? $0 : nil } }
        guard let (a, b) = ends(text) else { return number(Substring(text)).map { .fixed($0) } }
        guard let low = number(a), let high = number(b), low <= high else { return nil }
        return .range(low...high)
    }

    /// Whether `text` is written as a range whose ends are the wrong way round ("2..-2").
    public static func isBackwards(_ text: String) -> Bool {
        guard let (a, b) = ends(text), let low = Double(a), let high = Double(b) else { return false }
        return low > high
    }

    /// The two sides of "A..B" (neither empty, no third dot), nil when `text` is not so written.
    private static func ends(_ text: String) -> (Substring, Substring)? {
        guard let dots = text.firstRange(of: "..") else { return nil }
        let a = text[..<dots.lowerBound], b = text[dots.upperBound...]
        guard !a.isEmpty, !b.isEmpty, !b.hasPrefix(".") else { return nil }
        return (a, b)
    }
}

/// SplitMix64 (Steele, Lea and Flood 2014; the seeding generator of
/// xoshiro): one 64-bit state, every seed a good stream, the same numbers on
/// every machine and in every process.
struct SplitMix64 {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in 0..<n (n > 0), without modulo bias (draws below 2^64 mod n are drawn again).
    mutating func next(below n: UInt64) -> UInt64 {
        precondition(n > 0)
        let threshold = (0 &- n) % n
        while true {
            let x = next()
            if x >= threshold { return x % n }
        }
    }

    /// Uniform in [0, 1), 53 bits.
    mutating func nextUnit() -> Double { Double(next() >> 11) * 0x1p-53 }
}

extension Score {
    /// The score played `factor` times as fast: every time divided by it (an
    /// SMPTE-timed file, whose tempo events mean nothing; `scalingTempo`
    /// does it for the others).
    func faster(by factor: Double) -> Score {
        guard factor != 1 else { return self }
        var score = Score(events: events.map { var e = $0; e.seconds /= factor; return e }, duration: duration / factor)
        score.sysExMessages = sysExMessages
        return score
    }
}
