// Reading a Standard MIDI File: header, chunks, track events.

extension StandardMIDIFile {
    /// Reads a Standard MIDI File (or a RIFF `RMID` file wrapping one).
    ///
    /// Problems that leave the rest readable (a chunk longer than the file,
    /// a missing end-of-track, a bad variable-length number, a truncated event,
    /// a wrong track count) end the affected track where it stops making sense
    /// and are listed in `warnings`. A file whose header cannot be read throws.
    public init(bytes: [UInt8]) throws(SMFError) {
        let result: Result<StandardMIDIFile, SMFError> = bytes.withUnsafeBytes { raw in
            var reader = SMFReader(raw)
            do throws(SMFError) { return .success(try reader.read()) } catch { return .failure(error) }
        }
        self = try result.get()
    }
}

/// One pass over the bytes; offsets in warnings and errors are file offsets.
struct SMFReader {
    let p: UnsafeRawBufferPointer
    var warnings: [SMFWarning] = []

    init(_ p: UnsafeRawBufferPointer) { self.p = p }

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

    mutating func read() throws(SMFError) -> StandardMIDIFile {
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

    mutating func readSMF(from start: Int, to end: Int) throws(SMFError) -> StandardMIDIFile {
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

        var tracks: [Track] = []
        tracks.reserveCapacity(declaredTracks)
        var i = start + 8 + Int(headerLength)
        if i > end {
            warn(start + 4, "header chunk length \(headerLength) runs past the end of the file")
            i = end
        }
        while i < end {
            guard i + 8 <= end else {
                warn(i, "\(end - i) trailing bytes ignored")
                break
            }
            let length = Int(u32(i + 4))
            if tag(i, "MTrk") {
                var chunkEnd = i + 8 + length
                if chunkEnd > end {
                    warn(i + 4, track: tracks.count,
                         "track chunk length \(length) runs past the end of the file by \(chunkEnd - end) bytes")
                    chunkEnd = end
                }
                tracks.append(readTrack(from: i + 8, to: chunkEnd, index: tracks.count))
                i = chunkEnd
            } else if isChunkName(i) {
                // Unknown chunks are skipped, as the SMF specification asks.
                if i + 8 + length > end {
                    warn(i + 4, "chunk length \(length) runs past the end of the file")
                    break
                }
                i += 8 + length
            } else {
                warn(i, "\(end - i) bytes that are not a chunk ignored")
                break
            }
        }
        if tracks.count != declaredTracks {
            warn(start + 10, "header declares \(declaredTracks) tracks, found \(tracks.count)")
        }
        if format == .singleTrack && tracks.count > 1 {
            warn(start + 8, "format 0 file with \(tracks.count) tracks")
        }
        return StandardMIDIFile(format: format, division: division, tracks: tracks, warnings: warnings)
    }

    func isChunkName(_ i: Int) -> Bool {
        for k in 0..<4 where !(0x20...0x7E).contains(p[i + k]) { return false }
        return true
    }

    /// Reads one `MTrk` body. Stops (with a warning) where the bytes stop making sense.
    mutating func readTrack(from start: Int, to end: Int, index: Int) -> Track {
        var events: [TrackEvent] = []
        events.reserveCapacity((end - start) / 3 + 1)
        let p = self.p
        var i = start
        var tick: UInt64 = 0
        var status: UInt8 = 0
        var sawEnd = false

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
            var b = p[i]
            if b < 0x80 {
                tick &+= UInt64(b)
                i += 1
            } else {
                guard let delta = vlq(&i, "delta time", &self) else { break parsing }
                tick &+= UInt64(delta)
            }
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
                let d1 = p[i]
                let d2 = two ? p[i + 1] : 0
                guard d1 < 0x80, d2 < 0x80 else {
                    warn(d1 >= 0x80 ? i : i + 1, track: index, "status byte where a data byte was expected")
                    break parsing
                }
                i += needed
                events.append(TrackEvent(tick: tick, event: .midi(.channelMessage(status: b, data1: d1, data2: d2))))
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
                events.append(TrackEvent(tick: tick, event: .meta(meta)))
                if case .endOfTrack = meta {
                    sawEnd = true
                    if i < end { warn(i, track: index, "\(end - i) bytes after the end of track ignored") }
                    break parsing
                }
            case 0xF0:
                guard let data = payload(&i, "SysEx event", &self) else { break parsing }
                if data.last == 0xF7 {
                    events.append(TrackEvent(tick: tick, event: .midi(.sysEx(Array(data.dropLast())))))
                } else {
                    events.append(TrackEvent(tick: tick, event: .sysExStart(data)))
                }
            case 0xF7:
                guard let data = payload(&i, "SysEx escape event", &self) else { break parsing }
                events.append(TrackEvent(tick: tick, event: .sysExEscape(data)))
            default:
                // System common and real-time bytes do not belong in a file; read them as messages if defined.
                guard let length = MIDIMessage.dataLength(forStatus: b) else {
                    warn(eventOffset, track: index, "undefined status byte 0x\(hex(b))")
                    break parsing
                }
                guard end - i >= length else {
                    warn(eventOffset, track: index, "track ends inside a system message")
                    break parsing
                }
                let d1 = length > 0 ? p[i] : 0
                let d2 = length > 1 ? p[i + 1] : 0
                guard d1 < 0x80, d2 < 0x80, let message = MIDIMessage(status: b, data1: d1, data2: d2) else {
                    warn(eventOffset, track: index, "status byte where a data byte was expected")
                    break parsing
                }
                i += length
                events.append(TrackEvent(tick: tick, event: .midi(message)))
            }
        }
        if !sawEnd {
            warn(end, track: index, "track has no end-of-track event")
        }
        return Track(events: events)
    }
}

func hex(_ b: UInt8) -> String {
    let s = String(b, radix: 16, uppercase: true)
    return b < 0x10 ? "0" + s : s
}
