@testable import MIDI

/// Builds SMF bytes by hand for tests.
enum SMFBytes {
    static func header(format: UInt16 = 1, tracks: UInt16, division: UInt16 = 96, length: UInt32 = 6) -> [UInt8] {
        var out: [UInt8] = Array("MThd".utf8)
        out += be32(length)
        out += be16(format) + be16(tracks) + be16(division)
        return out
    }

    static func chunk(_ id: String, _ body: [UInt8], length: UInt32? = nil) -> [UInt8] {
        Array(id.utf8) + be32(length ?? UInt32(body.count)) + body
    }

    static func track(_ body: [UInt8], length: UInt32? = nil) -> [UInt8] { chunk("MTrk", body, length: length) }

    static func file(format: UInt16 = 1, division: UInt16 = 96, tracks: [[UInt8]]) -> [UInt8] {
        header(format: format, tracks: UInt16(tracks.count), division: division) + tracks.flatMap { track($0) }
    }

    static let endOfTrack: [UInt8] = [0x00, 0xFF, 0x2F, 0x00]

    static func be16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }
    static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
    static func le32(_ v: UInt32) -> [UInt8] { be32(v).reversed() }
}

extension StandardMIDIFile {
    /// All events of all tracks, without ticks.
    var allEvents: [FileEvent] { tracks.flatMap { $0.events.map(\.event) } }
}
