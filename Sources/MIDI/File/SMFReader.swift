// Reading a Standard MIDI File: header, chunks, track events.

extension StandardMIDIFile {
    /// Reads a Standard MIDI File (or a RIFF `RMID` file wrapping one).
    ///
    /// Problems that leave the rest readable (a chunk longer than the file,
    /// a missing end-of-track, a bad variable-length number, a truncated event,
    /// a wrong track count) end the affected track where it stops making sense
    /// and are listed in `warnings`. A file whose header cannot be read throws.
    /// As FluidSynth's player, mido and symusic read them: only the header's count
    /// of track chunks is read, and a channel message's data byte over 127 is read
    /// as data (clamped to 127) unless it clearly starts the next event.
    public init(bytes: [UInt8]) throws(SMFError) {
        let result: Result<StandardMIDIFile, SMFError> = bytes.withUnsafeBytes { raw in
            do throws(SMFError) { return .success(try StandardMIDIFile(bytes: raw)) } catch { return .failure(error) }
        }
        self = try result.get()
    }

    /// Reads a Standard MIDI File from bytes in memory (see `init(bytes: [UInt8])`).
    public init(bytes: UnsafeRawBufferPointer) throws(SMFError) {
        var reader = SMFReader(bytes, sink: TrackBuilder())
        let header = try reader.read()
        self.init(format: header.format, division: header.division, tracks: reader.sink.tracks, warnings: header.warnings)
    }

    /// Reads a Standard MIDI File without keeping its events: each event goes
    /// to `visitor` as it is read, track after track, in file order. Salvages
    /// damaged files exactly as `init(bytes:)` does; returns the header and the
    /// warnings. For summaries of big files: nothing per event is stored.
    public static func visit<V: SMFVisitor>(bytes: UnsafeRawBufferPointer, _ visitor: inout V) throws(SMFError) -> SMFHeader {
        var reader = SMFReader(bytes, sink: visitor)
        defer { visitor = reader.sink }
        return try reader.read()
    }
}

/// What `StandardMIDIFile.visit(bytes:_:)` hands over, event by event.
public protocol SMFVisitor {
    /// Track chunk `index` (0-based) begins.
    mutating func beginTrack(_ index: Int, byteCount: Int)
    /// An event of the current track at its absolute tick within the track.
    mutating func visit(tick: UInt64, _ event: FileEvent)
    /// The current track ends (after its last event, or where it stopped making sense).
    mutating func endTrack(_ index: Int)
    /// Delta times of at least this many ticks go to `longDelta` (default: none), for a file of `division`.
    func longDeltaTicks(for division: StandardMIDIFile.Division) -> UInt64
    /// The next event of the current track comes `ticks` after the one before
    /// it (or the track's start), at `tick`; its delta time starts at byte `offset`.
    mutating func longDelta(_ ticks: UInt64, toTick tick: UInt64, eventOffset offset: Int)
}

extension SMFVisitor {
    public func longDeltaTicks(for division: StandardMIDIFile.Division) -> UInt64 { .max }
    public mutating func longDelta(_ ticks: UInt64, toTick tick: UInt64, eventOffset offset: Int) {}
}

/// A file's header as read, with the problems the reader worked around.
public struct SMFHeader: Hashable, Sendable {
    public var format: StandardMIDIFile.Format
    public var division: StandardMIDIFile.Division
    public var warnings: [SMFWarning]
}

/// The visitor behind `StandardMIDIFile(bytes:)`: keeps every event.
struct TrackBuilder: SMFVisitor {
    var tracks: [Track] = []
    var events: [TrackEvent] = []

    mutating func beginTrack(_ index: Int, byteCount: Int) {
        events = []
        events.reserveCapacity(byteCount / 3 + 1)
    }
    @inline(__always)
    mutating func visit(tick: UInt64, _ event: FileEvent) { events.append(TrackEvent(tick: tick, event: event)) }
    mutating func endTrack(_ index: Int) {
        tracks.append(Track(events: events))
        events = []
    }
}

/// One pass over the bytes; offsets in warnings and errors are file offsets.
struct SMFReader<Sink: SMFVisitor> {
    let p: UnsafeRawBufferPointer
    var warnings: [SMFWarning] = []
    var sink: Sink
    /// Deltas from this many ticks up go to `sink.longDelta` (set once the division is known).
    var longDelta: UInt64 = .max

    init(_ p: UnsafeRawBufferPointer, sink: Sink) { self.p = p; self.sink = sink }

    @inline(__always) func u16(_ i: Int) -> UInt16 { UInt16(p[i]) << 8 | UInt16(p[i + 1]) }
    @inline(__always) func u32(_ i: Int) -> UInt32 {
        UInt32(p[i]) << 24 | UInt32(p[i + 1]) << 16 | UInt32(p[i + 2]) << 8 | UInt32(p[i + 3])
    }
    @inline(__always) func u32le(_ i: Int) -> UInt32 {
        UInt32(p[i + 3]) << 24 | UInt32(p[i + 2]) << 16 | UInt32(p[i + 1]) << 8 | UInt32(p[i])
    }
    func tag(_ i: Int, _ s: StaticString) -> Bool {
        guard i >= 0, i + 4 <= p.count else { return false }
        let t = s.utf8Start
        return p[i] == t[0] && p[i + 1] == t[1] && p[i + 2] == t[2] && p[i + 3] == t[3]
    }

    mutating func warn(_ offset: Int, track: Int? = nil, _ message: String) {
        warnings.append(SMFWarning(offset: offset, track: track, message: message))
    }

    mutating func read() throws(SMFError) -> SMFHeader {
        guard p.count > 0 else { throw SMFError(.empty, at: 0) }
        var start = 0
        var end = p.count
        if tag(0, "RIFF") {
            (start, end) = try riffData()
        } else if !tag(0, "MThd") {
            // Some files carry a wrapper (MacBinary) before the header: look a little further.
            var found: Int?
            var i = 1
            while i + 4 <= min(p.count, 1024) {
                if tag(i, "MThd") { found = i; break }
                i += 1
            }
            guard let found else { throw SMFError(.notAMIDIFile, at: 0) }
            warn(0, "\(found) bytes before the MThd header skipped")
            start = found
        }
        return try readSMF(from: start, to: end)
    }

    /// The SMF inside a RIFF `RMID` file: the range of its `data` chunk.
    mutating func riffData() throws(SMFError) -> (Int, Int) {
        guard tag(8, "RMID") else { throw SMFError(.notAMIDIFile, at: 8) }
        var i = 12
        while i + 8 <= p.count {
            let size = Int(u32le(i + 4))
            if tag(i, "data") {
                var end = i + 8 + size
                if end > p.count {
                    warn(i + 4, "RIFF data chunk length \(size) runs past the end of the file")
                    end = p.count
                }
                return (i + 8, end)
            }
            i += 8 + size + (size & 1)
        }
        throw SMFError(.riffWithoutData, at: 12)
    }

    mutating func readSMF(from start: Int, to end: Int) throws(SMFError) -> SMFHeader {
        guard tag(start, "MThd") else { throw SMFError(.notAMIDIFile, at: start) }
        guard start + 14 <= end else { throw SMFError(.truncatedHeader, at: start) }
        let headerLength = u32(start + 4)
        guard headerLength >= 6 else { throw SMFError(.headerTooShort(headerLength), at: start + 4) }
        let rawFormat = u16(start + 8)
        guard let format = StandardMIDIFile.Format(rawValue: rawFormat) else {
            throw SMFError(.unsupportedFormat(rawFormat), at: start + 8)
        }
        let declaredTracks = Int(u16(start + 10))
        let rawDivision = u16(start + 12)
        let division: StandardMIDIFile.Division
        if rawDivision & 0x8000 != 0 {
            let fps = -Int(Int8(bitPattern: UInt8(rawDivision >> 8)))
            let tpf = Int(rawDivision & 0xFF)
            guard [24, 25, 29, 30].contains(fps), tpf > 0 else {
                throw SMFError(.invalidDivision(rawDivision), at: start + 12)
            }
            division = .smpte(framesPerSecond: fps, ticksPerFrame: tpf)
        } else {
            guard rawDivision > 0 else { throw SMFError(.invalidDivision(rawDivision), at: start + 12) }
            division = .ticksPerQuarterNote(rawDivision)
        }

        longDelta = sink.longDeltaTicks(for: division)
        // The header's track count is taken at its word, as FluidSynth's player, mido and
        // symusic take it: track chunks past that count are not read (in damaged files they
        // usually repeat the song, which would sound two or three times), and a count of 0
        // reads no track. Chunks that are not `MTrk` are skipped and not counted (FluidSynth
        // and symusic; mido refuses the file).
        var trackCount = 0
        var i = start + 8 + Int(headerLength)
        if i > end {
            warn(start + 4, "header chunk length \(headerLength) runs past the end of the file")
            i = end
        }
        while i < end && trackCount < declaredTracks {
            guard let length = chunkLength(at: i, end: end) else { break }
            if tag(i, "MTrk") {
                var chunkEnd = i + 8 + length
                if chunkEnd > end {
                    warn(i + 4, track: trackCount,
                         "track chunk length \(length) runs past the end of the file by \(chunkEnd - end) bytes")
                    chunkEnd = end
                }
                sink.beginTrack(trackCount, byteCount: chunkEnd - (i + 8))
                readTrack(from: i + 8, to: chunkEnd, index: trackCount)
                sink.endTrack(trackCount)
                trackCount += 1
                i = chunkEnd
            } else {
                // Unknown chunks are skipped, as the SMF specification asks.
                if i + 8 + length > end {
                    warn(i + 4, "chunk length \(length) runs past the end of the file")
                    break
                }
                i += 8 + length
            }
        }
        if trackCount < declaredTracks {
            warn(start + 10, "header declares \(declaredTracks) track\(declaredTracks == 1 ? "" : "s"), found \(trackCount)")
        } else if i < end {
            // What follows the declared tracks is not read; say how many track chunks that
            // leaves out, unless none holds a channel message: Seq24 and Seq66 append such a
            // chunk, uncounted, for their own settings (meta events only) to every file.
            var extra = 0, firstExtra = i, music = false
            while i < end, let length = chunkLength(at: i, end: end, quiet: true) {
                if tag(i, "MTrk") {
                    if extra == 0 { firstExtra = i }
                    extra += 1
                    music = music || holdsChannelMessage(from: i + 8, to: min(end, i + 8 + length))
                }
                i += 8 + length
            }
            if extra > 0 && music {
                let chunks = "\(extra) track chunk\(extra == 1 ? "" : "s")"
                warn(firstExtra, declaredTracks == 0
                     ? "header declares 0 tracks: \(chunks) not read"
                     : "header declares \(declaredTracks) track\(declaredTracks == 1 ? "" : "s"): \(chunks) after "
                       + (declaredTracks == 1 ? "it" : "them") + " not read")
            } else if extra == 0 && i < end {
                _ = chunkLength(at: i, end: end)
            }
        }
        if format == .singleTrack && trackCount > 1 {
            warn(start + 8, "format 0 file with \(trackCount) tracks")
        }
        return SMFHeader(format: format, division: division, warnings: warnings)
    }

    /// The length of the chunk at `i`, or nil (with a warning unless `quiet`) where
    /// no chunk starts: fewer than 8 bytes left, or a name that is not four printable
    /// characters. A length that runs past `end` is returned as it is.
    mutating func chunkLength(at i: Int, end: Int, quiet: Bool = false) -> Int? {
        guard i + 8 <= end else {
            if !quiet { warn(i, "\(end - i) trailing bytes ignored") }
            return nil
        }
        guard isChunkName(i) else {
            if !quiet { warn(i, "\(end - i) bytes that are not a chunk ignored") }
            return nil
        }
        return Int(u32(i + 4))
    }

    func isChunkName(_ i: Int) -> Bool {
        for k in 0..<4 where !(0x20...0x7E).contains(p[i + k]) { return false }
        return true
    }

    /// Reads one `MTrk` body. Stops (with a warning) where the bytes stop making sense.
    mutating func readTrack(from start: Int, to end: Int, index: Int) {
        let p = self.p
        var i = start
        var tick: UInt64 = 0
        var status: UInt8 = 0
        var sawEnd = false
        // The next event follows a channel message cut short, at its tick: it has no delta time.
        var noDelta = false
        // Damage counted per track and warned once each (at the place of the first case).
        var highData = (count: 0, offset: 0, byte: UInt8(0), warningIndex: 0)
        var cutShort = (count: 0, offset: 0, status: UInt8(0), next: UInt8(0), warningIndex: 0)

        // A variable-length quantity at `i` (at most 4 bytes), advancing `i`; nil with a warning if bad.
        func vlq(_ i: inout Int, _ what: String, _ reader: inout SMFReader) -> Int? {
            var value = 0
            for n in 0..<4 {
                guard i < end else {
                    reader.warn(i, track: index, "track ends inside a \(what)")
                    return nil
                }
                let b = p[i]
                i += 1
                value = value << 7 | Int(b & 0x7F)
                if b < 0x80 { return value }
                if n == 3 {
                    reader.warn(i - 4, track: index, "\(what) longer than 4 bytes")
                    return nil
                }
            }
            return nil
        }

        // The `length` bytes at `i`, advancing it; nil with a warning if they run past the track.
        func payload(_ i: inout Int, _ what: String, _ reader: inout SMFReader) -> [UInt8]? {
            guard let length = vlq(&i, "\(what) length", &reader) else { return nil }
            guard length <= end - i else {
                reader.warn(i, track: index, "\(what) of \(length) bytes runs past the end of the track")
                return nil
            }
            let bytes = [UInt8](UnsafeRawBufferPointer(rebasing: p[i..<(i + length)]))
            i += length
            return bytes
        }

        parsing: while i < end {
            // Delta time: fast path for one byte, the usual case.
            let deltaOffset = i
            var b = p[i]
            let delta: UInt64
            if noDelta {
                noDelta = false
                delta = 0
            } else if b < 0x80 {
                delta = UInt64(b)
                i += 1
            } else {
                guard let d = vlq(&i, "delta time", &self) else { break parsing }
                delta = UInt64(d)
            }
            tick &+= delta
            if delta >= longDelta { sink.longDelta(delta, toTick: tick, eventOffset: deltaOffset) }
            guard i < end else {
                warn(i, track: index, "track ends after a delta time")
                break
            }
            let eventOffset = i
            b = p[i]
            if b < 0x80 {
                guard status != 0 else {
                    warn(i, track: index, "data byte 0x\(hex(b)) without a status byte")
                    break parsing
                }
                b = status
            } else {
                i += 1
            }

            if b < 0xF0 {
                status = b
                let two = b < 0xC0 || b >= 0xE0
                let needed = two ? 2 : 1
                guard end - i >= needed else {
                    warn(eventOffset, track: index, "track ends inside a channel message")
                    break parsing
                }
                var d1 = p[i]
                var d2 = two ? p[i + 1] : 0
                if (d1 | d2) >= 0x80 {
                    // A data byte with its top bit set. FluidSynth's player and symusic read a
                    // channel message's fixed number of data bytes whatever they hold, and so do
                    // we, clamped to 127 as mido (clip=True), symusic (sanitize_data) and DryWetMIDI
                    // (SnapToLimits) can: masking to 7 bits would make velocity 0x80 (an 8-bit
                    // scale's 128, as real files write it) a note-off and CC 0x80 a 0 — unless that reading
                    // derails and the byte reads as the status of a well-formed event: then the
                    // message lost a data byte, is dropped, and the event starts at that byte.
                    let k = d1 >= 0x80 ? i : i + 1
                    if !parsesCleanly(from: i + needed, to: end, status: b, atEvent: false, strict: false)
                        && parsesCleanly(from: k, to: end, status: b, atEvent: true, strict: true) {
                        if cutShort.count == 0 { cutShort = (0, eventOffset, b, p[k], warnings.count) }
                        cutShort.count += 1
                        i = k
                        noDelta = true
                        continue
                    }
                    if highData.count == 0 { highData = (0, k, p[k], warnings.count) }
                    highData.count += 1
                    d1 = min(d1, 0x7F)
                    d2 = min(d2, 0x7F)
                }
                i += needed
                sink.visit(tick: tick, .midi(.channelMessage(status: b, data1: d1, data2: d2)))
                continue
            }

            switch b {
            case 0xFF:
                guard i < end else {
                    warn(eventOffset, track: index, "track ends inside a meta event")
                    break parsing
                }
                let type = p[i]
                i += 1
                guard let data = payload(&i, "meta event", &self) else { break parsing }
                let meta = MetaEvent(type: type, data: data)
                sink.visit(tick: tick, .meta(meta))
                if case .endOfTrack = meta {
                    sawEnd = true
                    if i < end { warn(i, track: index, "\(end - i) bytes after the end of track ignored") }
                    break parsing
                }
            case 0xF0:
                guard let data = payload(&i, "SysEx event", &self) else { break parsing }
                if data.last == 0xF7 {
                    sink.visit(tick: tick, .midi(.sysEx(Array(data.dropLast()))))
                } else {
                    sink.visit(tick: tick, .sysExStart(data))
                }
            case 0xF7:
                guard let data = payload(&i, "SysEx escape event", &self) else { break parsing }
                sink.visit(tick: tick, .sysExEscape(data))
            default:
                // F1–F6 and F8–FE have no place in a file (the SMF spec allows only channel,
                // F0/F7 SysEx and FF meta events), yet damaged files carry them. FluidSynth's
                // reader takes such a byte for a channel status and fails the track ("Unrecognized
                // MIDI event"), losing every note after it. We skip the byte with the data bytes
                // a system common message carries per MIDI 1.0 (F1: 1, F2: 2, F3: 1, F6: 0;
                // F4/F5/F9/FD and real-time bytes: none; a status byte ends them early), warn,
                // and go on at the next delta time, so the rest of the track plays.
                // Running status is kept for both kinds. MIDI 1.0 has a system common message
                // cancel it on the wire (real-time bytes never do), but a stray byte in a file
                // is damage, not a message the file's sequencer sent: the running-status events
                // after it were written for the channel status before it, and cancelling would
                // drop them all ("data byte without a status byte").
                let length = Self.strayDataLength(b)
                var skipped = 0
                while skipped < length && i < end && p[i] < 0x80 {
                    i += 1
                    skipped += 1
                }
                warn(eventOffset, track: index, Self.strayName(b) + " 0x\(hex(b))"
                     + (skipped > 0 ? " and \(skipped) data byte\(skipped == 1 ? "" : "s")" : "") + " skipped")
            }
        }
        // The counted warnings go where their first case was, in file order with the others.
        let counted = [
            highData.count == 0 ? nil : (highData.warningIndex, SMFWarning(offset: highData.offset, track: index, message:
                highData.count == 1
                    ? "data byte 0x\(hex(highData.byte)) over 127 read as 127"
                    : "\(highData.count) data bytes over 127 read as 127 (the first: 0x\(hex(highData.byte)))")),
            cutShort.count == 0 ? nil : (cutShort.warningIndex, SMFWarning(offset: cutShort.offset, track: index, message:
                (cutShort.count == 1 ? "channel message 0x\(hex(cutShort.status))" : "\(cutShort.count) channel messages")
                + " cut short by a status byte dropped"
                + (cutShort.count == 1 ? " (0x\(hex(cutShort.next)) starts the next event)" : " (the first: 0x\(hex(cutShort.status)))"))),
        ].compactMap { $0 }
        for (at, warning) in counted.sorted(by: { $0.0 > $1.0 }) {
            warnings.insert(warning, at: at)
        }
        if !sawEnd {
            warn(end, track: index, "track has no end-of-track event")
        }
    }

    /// A variable-length quantity at `j` (at most 4 bytes, before `end`), advancing `j`;
    /// nil, silently, where it is cut or too long (for looking ahead, not reading).
    func variableLength(at j: inout Int, end: Int) -> Int? {
        var value = 0
        for _ in 0..<4 {
            guard j < end else { return nil }
            let c = p[j]
            j += 1
            value = value << 7 | Int(c & 0x7F)
            if c < 0x80 { return value }
        }
        return nil
    }

    /// Whether a track body holds a channel message before anything that does not read
    /// as an event (Seq66's settings chunk is longer than its length says).
    func holdsChannelMessage(from start: Int, to end: Int) -> Bool {
        var j = start
        func vlq() -> Int? { variableLength(at: &j, end: end) }
        while j < end {
            guard vlq() != nil, j < end else { return false }
            let b = p[j]
            j += 1
            switch b {
            case 0x80..<0xF0:
                return true
            case 0xFF:
                guard j < end else { return false }
                let type = p[j]
                j += 1
                guard let length = vlq(), length <= end - j, type != 0x2F else { return false }
                j += length
            case 0xF0, 0xF7:
                guard let length = vlq(), length <= end - j else { return false }
                j += length
            default:
                return false
            }
        }
        return false
    }

    /// Whether the track's bytes from `start` read cleanly as events — up to the track's
    /// end, its end-of-track, or for `limit` events — with `status` as the running status
    /// and the first event without its delta time when `atEvent`. Chooses between two
    /// readings of a damaged byte; `strict` also fails on a data byte over 127 (which the
    /// reader itself takes as data).
    func parsesCleanly(from start: Int, to end: Int, status runningStatus: UInt8, atEvent: Bool,
                       strict: Bool, limit: Int = 8) -> Bool {
        var j = start, status = runningStatus, skipDelta = atEvent
        func vlq() -> Int? { variableLength(at: &j, end: end) }
        for _ in 0..<limit {
            if j == end { return !skipDelta }
            if skipDelta {
                skipDelta = false
            } else {
                guard vlq() != nil, j < end else { return false }
            }
            var b = p[j]
            if b < 0x80 {
                guard status >= 0x80 else { return false }
                b = status
            } else {
                j += 1
            }
            switch b {
            case 0x80..<0xF0:
                status = b
                let needed = b < 0xC0 || b >= 0xE0 ? 2 : 1
                guard end - j >= needed else { return false }
                if strict && (p[j] >= 0x80 || (needed == 2 && p[j + 1] >= 0x80)) { return false }
                j += needed
            case 0xFF:
                guard j < end, p[j] < 0x80 else { return false }
                let type = p[j]
                j += 1
                guard let length = vlq(), length <= end - j, Self.metaLengthFits(type: type, length: length) else { return false }
                j += length
                if type == 0x2F { return true }
            case 0xF0, 0xF7:
                guard let length = vlq(), length <= end - j else { return false }
                j += length
            default:
                return false
            }
        }
        return true
    }
}

extension SMFReader {
    /// Whether a meta event of `type` may have `length` data bytes (the SMF 1.0 lengths of
    /// the fixed-size ones; any for the others).
    static func metaLengthFits(type: UInt8, length: Int) -> Bool {
        switch type {
        case 0x00: length == 0 || length == 2
        case 0x20, 0x21: length == 1
        case 0x2F: length == 0
        case 0x51: length == 3
        case 0x54: length == 5
        case 0x58: length == 4
        case 0x59: length == 2
        default: true
        }
    }

    /// Data bytes after a status byte F1–FE that has no place in a file (MIDI 1.0 lengths).
    static func strayDataLength(_ status: UInt8) -> Int {
        switch status {
        case 0xF1, 0xF3: 1
        case 0xF2: 2
        default: 0
        }
    }

    static func strayName(_ status: UInt8) -> String {
        switch status {
        case 0xF1, 0xF2, 0xF3, 0xF6: "system common message"
        case 0xF8, 0xFA, 0xFB, 0xFC, 0xFE: "real-time byte"
        default: "undefined status byte"
        }
    }
}

func hex(_ b: UInt8) -> String {
    let s = String(b, radix: 16, uppercase: true)
    return b < 0x10 ? "0" + s : s
}
