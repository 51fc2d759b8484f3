import CFluidSynth

/// The preset data of an SF2/SF3 file — its `pdta` list, the "hydra" of the
/// SoundFont 2.04 spec — kept as bytes, read the way FluidSynth 2.3 reads it
/// (src/sfloader/fluid_sffile.c, fluid_defsfont.c), and rebuilt keeping only
/// chosen zones: a reduced view of the font whose presets play exactly as
/// before for the notes the kept zones cover.
///
/// Nine sub-chunks, in this order: preset headers (phdr), preset zones
/// (pbag), their modulators (pmod) and generators (pgen); the same four for
/// instruments (inst, ibag, imod, igen); sample headers (shdr). Every list
/// ends with a terminal record (EOP, EOI, EOS; zero gen and mod records). A
/// header's zones run from its bag index to the next header's (the terminal
/// header's index is the zone count), a zone's generators and modulators
/// likewise.
public struct SoundFontHydra: Sendable {
    /// One level of the hydra: presets or instruments.
    public struct Level: Sendable {
        let headers: [UInt8]
        let bags: [UInt8]
        let modulators: [UInt8]
        let generators: [UInt8]
        let headerSize: Int
        /// Where a header keeps its first zone's index.
        let bagIndexOffset: Int
        /// The generator that ends a zone and names what it plays: an
        /// instrument (41) in a preset zone, a sample (53) in an instrument zone.
        let targetGenerator: Int

        /// Headers (presets or instruments), the terminal record left out.
        public var count: Int { headers.count / headerSize - 1 }
        /// Zones of all headers.
        public var zoneCount: Int { bags.count / 4 - 1 }

        /// The zones of header `h`, as indices into the level's zone list.
        func zones(of h: Int) -> Range<Int> { bagIndex(h)..<bagIndex(h + 1) }

        func bagIndex(_ h: Int) -> Int { word(headers, h * headerSize + bagIndexOffset) }
        func generatorIndex(_ zone: Int) -> Int { word(bags, 4 * zone) }
        func modulatorIndex(_ zone: Int) -> Int { word(bags, 4 * zone + 2) }

        /// Zone `z` as FluidSynth reads it: a key range only as the first
        /// generator, a velocity range only as the first or after the key
        /// range (later ones are discarded), and the target generator ends
        /// the zone. FluidSynth's default range, when none is given, is 0...128.
        func zone(_ z: Int) -> Zone {
            var zone = Zone()
            var level = 0
            for g in generatorIndex(z)..<generatorIndex(z + 1) {
                let oper = word(generators, 4 * g), lo = Int(generators[4 * g + 2]), hi = Int(generators[4 * g + 3])
                if oper == 43 {
                    if level == 0 { level = 1; zone.keys = (lo, hi) }
                } else if oper == 44 {
                    if level <= 1 { level = 2; zone.velocities = (lo, hi) }
                } else if oper == targetGenerator {
                    zone.target = lo | hi << 8
                    break
                } else {
                    level = 2
                }
            }
            return zone
        }

        /// The level keeping the zones `keep` marks (indexed like the zone
        /// list), every header kept (with no zones where none is kept), each
        /// kept zone with its generators and modulators as they are.
        func rebuilt(keeping keep: [Bool]) -> Level {
            var headers: [UInt8] = [], bags: [UInt8] = [], modulators: [UInt8] = [], generators: [UInt8] = []
            headers.reserveCapacity(self.headers.count)
            var zones = 0
            for h in 0...count {
                var header = self.headers[h * headerSize..<(h + 1) * headerSize]
                header[h * headerSize + bagIndexOffset] = UInt8(zones & 0xFF)
                header[h * headerSize + bagIndexOffset + 1] = UInt8(zones >> 8)
                headers += header
                guard h < count else { break }
                for z in self.zones(of: h) where keep[z] {
                    appendWord(&bags, generators.count / 4)
                    appendWord(&bags, modulators.count / 10)
                    generators += self.generators[4 * generatorIndex(z)..<4 * generatorIndex(z + 1)]
                    modulators += self.modulators[10 * modulatorIndex(z)..<10 * modulatorIndex(z + 1)]
                    zones += 1
                }
            }
            appendWord(&bags, generators.count / 4)
            appendWord(&bags, modulators.count / 10)
            // The terminal records, as the file has them.
            generators += self.generators.suffix(4)
            modulators += self.modulators.suffix(10)
            return Level(headers: headers, bags: bags, modulators: modulators, generators: generators,
                         headerSize: headerSize, bagIndexOffset: bagIndexOffset, targetGenerator: targetGenerator)
        }

        /// Checks what FluidSynth checks and what `rebuilt` relies on: index
        /// lists that start at 0, never decrease and end at the terminal
        /// record; `name` says which level in the error.
        fileprivate func validate(_ name: String) throws(SoundFontFileError) {
            guard headers.count >= headerSize, bags.count >= 4, generators.count >= 4, modulators.count >= 10 else {
                throw .malformed("\(name): a list without its terminal record")
            }
            guard bagIndex(0) == 0, bagIndex(count) == zoneCount else {
                throw .malformed("\(name): header zone indices do not cover the zone list")
            }
            for h in 0..<count where bagIndex(h) > bagIndex(h + 1) {
                throw .malformed("\(name): header zone indices not monotonic")
            }
            guard generatorIndex(0) == 0, modulatorIndex(0) == 0,
                  generatorIndex(zoneCount) == generators.count / 4 - 1,
                  modulatorIndex(zoneCount) == modulators.count / 10 - 1 else {
                throw .malformed("\(name): zone indices do not cover the generator and modulator lists")
            }
            for z in 0..<zoneCount where generatorIndex(z) > generatorIndex(z + 1) || modulatorIndex(z) > modulatorIndex(z + 1) {
                throw .malformed("\(name): zone indices not monotonic")
            }
        }
    }

    /// A zone as FluidSynth reads it (see `Level.zone`).
    struct Zone {
        var keys = (lo: 0, hi: 128)
        var velocities = (lo: 0, hi: 128)
        /// The instrument or sample index; nil for a global zone (FluidSynth
        /// keeps one as the first zone and discards any other).
        var target: Int?
    }

    public let presets: Level
    public let instruments: Level
    /// Sample headers, terminal record included.
    let samples: [UInt8]
    /// Bytes of sample data (the `smpl` chunk): FluidSynth ignores a sample
    /// header that points outside it.
    let sampleDataBytes: Int
    /// The file's major version (`ifil`): FluidSynth loads every sample of a
    /// version 3 file (SF3) on its own, whole or on demand alike.
    let majorVersion: Int

    /// Reads the body of a `pdta` list (what follows its "pdta" id) of a font
    /// with `sampleDataBytes` bytes of sample data. Throws where FluidSynth
    /// would refuse the font, and where this reader is stricter than
    /// FluidSynth (no terminal records, index lists not starting at 0, bytes
    /// after the sample headers, a reference past the end of a list).
    public init(_ body: [UInt8], sampleDataBytes: Int, majorVersion: Int = 2) throws(SoundFontFileError) {
        var lists: [[UInt8]] = []
        var at = 0
        for (id, recordSize) in Self.layout {
            guard at + 8 <= body.count, Array(body[at..<at + 4]) == Array(id.utf8) else {
                throw .malformed("expected the \(id) sub-chunk")
            }
            let size = doubleWord(body, at + 4)
            guard size % recordSize == 0, size <= body.count - at - 8 else {
                throw .malformed("\(id): \(size) bytes, not a whole number of \(recordSize)-byte records within the list")
            }
            lists.append(Array(body[at + 8..<at + 8 + size]))
            at += 8 + size
        }
        guard at == body.count else { throw .malformed("\(body.count - at) bytes after the sample headers") }
        presets = Level(headers: lists[0], bags: lists[1], modulators: lists[2], generators: lists[3],
                        headerSize: 38, bagIndexOffset: 24, targetGenerator: 41)
        instruments = Level(headers: lists[4], bags: lists[5], modulators: lists[6], generators: lists[7],
                            headerSize: 22, bagIndexOffset: 20, targetGenerator: 53)
        samples = lists[8]
        self.sampleDataBytes = sampleDataBytes
        self.majorVersion = majorVersion
        try presets.validate("presets")
        try instruments.validate("instruments")
        guard samples.count >= 46 else { throw .malformed("samples: no terminal record") }
        // FluidSynth refuses a font whose presets name an instrument it lacks, or
        // whose instruments in use name a sample it lacks.
        var used = Set<Int>()
        for z in 0..<presets.zoneCount {
            guard let instrument = presets.zone(z).target else { continue }
            guard instrument < instruments.count else { throw .malformed("a preset zone names instrument \(instrument) of \(instruments.count)") }
            used.insert(instrument)
        }
        for instrument in used {
            for z in instruments.zones(of: instrument) {
                if let sample = instruments.zone(z).target, sample >= sampleCount {
                    throw .malformed("an instrument zone names sample \(sample) of \(sampleCount)")
                }
            }
        }
    }

    /// The sub-chunks in their order, with their record sizes.
    private static let layout: [(String, Int)] = [
        ("phdr", 38), ("pbag", 4), ("pmod", 10), ("pgen", 4),
        ("inst", 22), ("ibag", 4), ("imod", 10), ("igen", 4), ("shdr", 46),
    ]

    /// Samples, the terminal record left out.
    public var sampleCount: Int { samples.count / 46 - 1 }

    /// Which zones a reduced view keeps: one flag per preset zone and per instrument zone.
    public struct ZoneSelection: Sendable, Equatable {
        public var presetZones: [Bool]
        public var instrumentZones: [Bool]
        public var keptPresetZones: Int { presetZones.count { $0 } }
        public var keptInstrumentZones: Int { instrumentZones.count { $0 } }
    }

    /// Every zone: a view that is the file itself.
    public var allZones: ZoneSelection {
        ZoneSelection(presetZones: Array(repeating: true, count: presets.zoneCount),
                      instrumentZones: Array(repeating: true, count: instruments.zoneCount))
    }

    /// The zones that sound `notes`, as FluidSynth chooses them at a note-on
    /// (fluid_defpreset_noteon): of each preset played, its global zone and
    /// the zones whose key and velocity ranges hold a pair played on it; of
    /// each instrument those zones name, its global zone and the zones whose
    /// ranges, narrowed to a kept preset zone's, hold a pair played on that
    /// preset. Zones FluidSynth never sounds (a global zone not first, a
    /// sample it ignores) are left out; a first zone FluidSynth would take
    /// for global stays first. Presets never played keep no zone.
    public func zones(playing notes: PlayedNotes) -> ZoneSelection {
        var selection = ZoneSelection(presetZones: Array(repeating: false, count: presets.zoneCount),
                                      instrumentZones: Array(repeating: false, count: instruments.zoneCount))
        for p in 0..<presets.count {
            let program = word(presets.headers, 38 * p + 20), bank = word(presets.headers, 38 * p + 22)
            guard notes.plays(bank: bank, program: program) else { continue }
            let zones = presets.zones(of: p)
            for z in zones {
                let zone = presets.zone(z)
                guard let instrument = zone.target else {
                    if z == zones.lowerBound { selection.presetZones[z] = true }
                    continue
                }
                guard Self.holds(notes, bank, program, zone.keys, zone.velocities) else { continue }
                selection.presetZones[z] = true
                let instrumentZones = instruments.zones(of: instrument)
                for iz in instrumentZones {
                    let local = instruments.zone(iz)
                    guard let sample = local.target, isUsable(sample: sample) else {
                        // FluidSynth takes a first zone without a usable sample for the global zone.
                        if iz == instrumentZones.lowerBound { selection.instrumentZones[iz] = true }
                        continue
                    }
                    let keys = (lo: max(zone.keys.lo, local.keys.lo), hi: min(zone.keys.hi, local.keys.hi))
                    let velocities = (lo: max(zone.velocities.lo, local.velocities.lo),
                                      hi: min(zone.velocities.hi, local.velocities.hi))
                    if Self.holds(notes, bank, program, keys, velocities) { selection.instrumentZones[iz] = true }
                }
            }
        }
        return selection
    }

    /// A preset's bank and program, as its header gives them (FluidSynth's bank numbers: 128 is percussion).
    public struct PresetNumber: Hashable, Sendable {
        public var bank: Int
        public var program: Int
        public init(bank: Int, program: Int) { self.bank = bank; self.program = program }
    }

    /// The presets a voice of which may have an exclusive class: FluidSynth
    /// (fluid_synth_kill_by_exclusive_class_LOCAL) then ends the voices of
    /// the same class on the same channel, whatever preset started them.
    ///
    /// A voice's class is its exclusiveClass generator (57): set in an
    /// instrument zone (its own or the instrument's global zone), plus what
    /// modulators add to it. FluidSynth discards the generator in preset
    /// zones (fluid_sffile.c, `invalid_preset_gen`) and NRPN cannot move it
    /// (its NRPN scale is 0), but a font's modulator, at either level, may
    /// name it as destination. So a preset counts when any instrument its
    /// zones name has a zone with a nonzero generator 57, or when any of its
    /// zones or those instruments' zones has a modulator aimed at 57 — more
    /// than FluidSynth may sound (every zone, whatever it plays), never less.
    public func presetsWithExclusiveClass() -> Set<PresetNumber> {
        let exclusiveClass = 57
        func aims(_ level: Level, _ zone: Int) -> Bool {
            for m in level.modulatorIndex(zone)..<level.modulatorIndex(zone + 1)
            where word(level.modulators, 10 * m + 2) == exclusiveClass { return true }
            return false
        }
        var instrumentHasClass = [Bool](repeating: false, count: instruments.count)
        for i in 0..<instruments.count {
            for z in instruments.zones(of: i) {
                for g in instruments.generatorIndex(z)..<instruments.generatorIndex(z + 1)
                where word(instruments.generators, 4 * g) == exclusiveClass && word(instruments.generators, 4 * g + 2) != 0 {
                    instrumentHasClass[i] = true
                }
                if aims(instruments, z) { instrumentHasClass[i] = true }
            }
        }
        var found = Set<PresetNumber>()
        for p in 0..<presets.count {
            let number = PresetNumber(bank: word(presets.headers, 38 * p + 22), program: word(presets.headers, 38 * p + 20))
            for z in presets.zones(of: p) {
                let instrument = presets.zone(z).target
                if aims(presets, z) || instrument.map({ $0 < instruments.count && instrumentHasClass[$0] }) == true {
                    found.insert(number)
                }
            }
        }
        return found
    }

    private static func holds(_ notes: PlayedNotes, _ bank: Int, _ program: Int,
                              _ keys: (lo: Int, hi: Int), _ velocities: (lo: Int, hi: Int)) -> Bool {
        keys.lo <= keys.hi && velocities.lo <= velocities.hi
            && notes.contains(bank: bank, program: program, keys: keys.lo...keys.hi, velocities: velocities.lo...velocities.hi)
    }

    /// Whether FluidSynth takes sample header `s` (fluid_sample_validate): no
    /// ROM sample, no unknown type flag, start before end within the sample data.
    func isUsable(sample s: Int) -> Bool {
        let start = doubleWord(samples, 46 * s + 20), end = doubleWord(samples, 46 * s + 24)
        let type = word(samples, 46 * s + 44)
        let rom = 0x8000, known = 0x1 | 0x2 | 0x4 | 0x8 | 0x10 | rom
        guard type & rom == 0, type & ~known == 0 else { return false }
        var size = sampleDataBytes
        if type & 0x10 == 0 {   // 16-bit words; Ogg Vorbis samples (SF3) count bytes
            guard size % 2 == 0 else { return false }
            size /= 2
        }
        let last = end > 0 ? end - 1 : 0
        return last <= size && start < last
    }

    /// Bytes of sample data FluidSynth loads on demand for the instrument
    /// zones `selection` keeps, when every preset using them is selected:
    /// each sample once, as fluid_defsfont_load_sampledata reads it from a
    /// view (`serialized(keeping:forOnDemandPadding:)`): with the words of
    /// padding after it that the view leaves it (an SF3 sample: its compressed bytes).
    public func sampleBytes(keeping selection: SoundFontHydra.ZoneSelection, onDemandPadding padding: Int = onDemandPadding) -> Int {
        var kept = Set<Int>()
        for z in 0..<instruments.zoneCount where selection.instrumentZones[z] {
            guard let s = instruments.zone(z).target, s < sampleCount, isUsable(sample: s) else { continue }
            kept.insert(s)
        }
        let headers = padding == 0 ? samples : samplesEndingEarlier(by: padding)
        var ranges = Set<[Int]>()
        for s in kept { ranges.insert([doubleWord(headers, 46 * s + 20), doubleWord(headers, 46 * s + 24), word(headers, 46 * s + 44) & 0x10]) }
        return ranges.reduce(0) { total, range in
            let (start, end, compressed) = (range[0], range[1], range[2] != 0)
            return total + (compressed ? end - start : 2 * (min(end - 1 + padding, sampleDataBytes / 2) - start + 1))
        }
    }

    /// The words FluidSynth's on-demand loader reads after each 16-bit sample
    /// and plays as part of it: 46 (the SF2 spec's zero padding) before
    /// FluidSynth 2.4.4, 0 from then on (its issue #1484, fixed by #1487).
    /// Loaded whole, the default, the file plays each sample to its end.
    public static let onDemandPadding: Int = {
        var major: Int32 = 0, minor: Int32 = 0, micro: Int32 = 0
        fluid_version(&major, &minor, &micro)
        return (major, minor, micro) < (2, 4, 4) ? 46 : 0
    }()

    /// The sample headers with each end `padding` words earlier, so that
    /// FluidSynth's on-demand loader, which reads and plays `padding` words
    /// past a sample's end, reads exactly the sample: plays it as the file
    /// loaded whole does. Otherwise a voice runs on into the padding (or, in
    /// a font without it, the next sample's first words) and an end offset
    /// lands that much later: on TimGM6mb, an openmsx song rendered with
    /// samples on demand differed from the same song with the file loaded
    /// whole by -38 dB overall and -14 dB in its worst second.
    ///
    /// An SF3 file (major version 3) keeps every header as it is: FluidSynth
    /// loads each of its samples on its own, with the same padding, whether
    /// the file is loaded whole or on demand.
    ///
    /// A header stays as it is where moving its end would change more than
    /// the end: an SF3 sample (the loader adds no padding to those), a sample
    /// of `padding + 1` words or fewer (its end would come before its
    /// start), and a loop with a point past the end or one point before the
    /// start and one not (a loop past the end plays on when the file is
    /// loaded whole, but is clamped to a sample loaded without its padding;
    /// FluidSynth resets points before the start either way, but on the
    /// loader's sample-relative points only if both are).
    func samplesEndingEarlier(by padding: Int) -> [UInt8] {
        var headers = samples
        guard majorVersion != 3 else { return headers }
        for s in 0..<sampleCount {
            let at = 46 * s
            let start = doubleWord(samples, at + 20), end = doubleWord(samples, at + 24)
            let loopStart = doubleWord(samples, at + 28), loopEnd = doubleWord(samples, at + 32)
            let compressed = word(samples, at + 44) & 0x10 != 0
            let loopInside = (start...end).contains(loopStart) && (start...end).contains(loopEnd)
            let loopBefore = loopStart < start && loopEnd < start
            guard !compressed, end - start > padding + 1, loopInside || loopBefore else { continue }
            let moved = end - padding
            for k in 0..<4 { headers[at + 24 + k] = UInt8(moved >> (8 * k) & 0xFF) }
        }
        return headers
    }

    /// The `pdta` list (header included) keeping the zones `selection` marks;
    /// for FluidSynth's on-demand loader, its sample headers end
    /// `padding` words earlier (`samplesEndingEarlier(by:)`).
    public func serialized(keeping selection: ZoneSelection, forOnDemandPadding padding: Int = 0) -> [UInt8] {
        precondition(selection.presetZones.count == presets.zoneCount
                     && selection.instrumentZones.count == instruments.zoneCount)
        let p = presets.rebuilt(keeping: selection.presetZones)
        let i = instruments.rebuilt(keeping: selection.instrumentZones)
        let headers = padding == 0 ? samples : samplesEndingEarlier(by: padding)
        let lists = [p.headers, p.bags, p.modulators, p.generators, i.headers, i.bags, i.modulators, i.generators, headers]
        var body = Array("pdta".utf8)
        for ((id, _), list) in zip(Self.layout, lists) {
            body += Array(id.utf8)
            appendDoubleWord(&body, list.count)
            body += list
        }
        var chunk = Array("LIST".utf8)
        appendDoubleWord(&chunk, body.count)
        return chunk + body
    }
}

// Little-endian fields.

@inline(__always) func word(_ bytes: [UInt8], _ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }

@inline(__always) func doubleWord(_ bytes: [UInt8], _ at: Int) -> Int {
    Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24
}

@inline(__always) func appendWord(_ bytes: inout [UInt8], _ value: Int) {
    bytes.append(UInt8(value & 0xFF)); bytes.append(UInt8(value >> 8 & 0xFF))
}

@inline(__always) func appendDoubleWord(_ bytes: inout [UInt8], _ value: Int) {
    for shift in stride(from: 0, through: 24, by: 8) { bytes.append(UInt8(value >> shift & 0xFF)) }
}
