// Writing a Standard MIDI File.

extension StandardMIDIFile {
    /// The file as bytes: `MThd`, then one `MTrk` per track. Channel messages
    /// use running status; meta and SysEx events cancel it, as the
    /// specification asks. Each track ends with exactly one end-of-track (added
    /// if missing; end-of-track events before the last event are left out).
    /// Events must be in tick order; a gap longer than a delta can say (28 bits,
    /// 268,435,455 ticks: 46 minutes at 96 kHz with a tick a frame) is carried by
    /// empty text events, each the longest delta, so every event keeps its tick.
    public func serialized() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(14 + tracks.reduce(0) { $0 + 8 + $1.events.count * 3 + 4 })
        out.append(contentsOf: [0x4D, 0x54, 0x68, 0x64, 0, 0, 0, 6])   // "MThd", 6
        appendU16(&out, format.rawValue)
        appendU16(&out, UInt16(truncatingIfNeeded: tracks.count))
        switch division {
        case .ticksPerQuarterNote(let ppqn): appendU16(&out, ppqn)
        case .smpte(let fps, let tpf):
            out.append(UInt8(bitPattern: Int8(truncatingIfNeeded: -fps)))
            out.append(UInt8(truncatingIfNeeded: tpf))
        }
        for track in tracks { Self.appendTrack(track, to: &out) }
        return out
    }

    static func appendTrack(_ track: Track, to out: inout [UInt8]) {
        out.append(contentsOf: [0x4D, 0x54, 0x72, 0x6B, 0, 0, 0, 0])   // "MTrk", length patched below
        let lengthAt = out.count - 4
        var previous: UInt64 = 0
        var status: UInt8 = 0
        let events = track.events
        for (n, e) in events.enumerated() {
            if case .meta(.endOfTrack) = e.event, n != events.count - 1 { continue }
            var delta = e.tick >= previous ? e.tick - previous : 0
            while delta > 0x0FFF_FFFF {
                appendVLQ(&out, 0x0FFF_FFFF)
                out.append(contentsOf: [0xFF, 0x01, 0x00])   // an empty text event: meta, so it cancels running status
                status = 0
                delta -= 0x0FFF_FFFF
            }
            appendVLQ(&out, UInt32(delta))
            previous = max(previous, e.tick)
            switch e.event {
            case .midi(let m):
                switch m {
                case .sysEx(let s):
                    out.append(0xF0)
                    appendVLQ(&out, UInt32(clamping: s.data.count + 1))
                    out.append(contentsOf: s.data)
                    out.append(0xF7)
                    status = 0
                default:
                    let start = out.count
                    m.encode(into: &out)
                    let s = out[start]
                    if s < 0xF0 {
                        if s == status { out.remove(at: start) } else { status = s }
                    } else {
                        status = 0
                    }
                }
            case .meta(let meta):
                let data = meta.data
                out.append(0xFF)
                out.append(meta.type)
                appendVLQ(&out, UInt32(clamping: data.count))
                out.append(contentsOf: data)
                status = 0
            case .sysExStart(let data):
                out.append(0xF0)
                appendVLQ(&out, UInt32(clamping: data.count))
                out.append(contentsOf: data)
                status = 0
            case .sysExEscape(let data):
                out.append(0xF7)
                appendVLQ(&out, UInt32(clamping: data.count))
                out.append(contentsOf: data)
                status = 0
            }
        }
        if events.last.map({ if case .meta(.endOfTrack) = $0.event { false } else { true } }) ?? true {
            out.append(contentsOf: [0x00, 0xFF, 0x2F, 0x00])
        }
        let length = UInt32(truncatingIfNeeded: out.count - lengthAt - 4)
        out[lengthAt] = UInt8(length >> 24)
        out[lengthAt + 1] = UInt8((length >> 16) & 0xFF)
        out[lengthAt + 2] = UInt8((length >> 8) & 0xFF)
        out[lengthAt + 3] = UInt8(length & 0xFF)
    }
}

@inline(__always)
func appendU16(_ out: inout [UInt8], _ v: UInt16) {
    out.append(UInt8(v >> 8))
    out.append(UInt8(v & 0xFF))
}

/// Appends a variable-length quantity (7 bits per byte, most significant first); values above 0x0FFFFFFF are clamped.
func appendVLQ(_ out: inout [UInt8], _ value: UInt32) {
    let v = min(value, 0x0FFF_FFFF)
    if v >= 1 << 21 { out.append(UInt8(0x80 | (v >> 21) & 0x7F)) }
    if v >= 1 << 14 { out.append(UInt8(0x80 | (v >> 14) & 0x7F)) }
    if v >= 1 << 7 { out.append(UInt8(0x80 | (v >> 7) & 0x7F)) }
    out.append(UInt8(v & 0x7F))
}
