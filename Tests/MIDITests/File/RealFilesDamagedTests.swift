import Foundation
import Testing
@testable import MIDI

/// Real damaged files from DryWetMIDI's and symusic's test suites (Tests/Fixtures/DamagedMIDI,
/// sources and licenses in its README): note counts as mido and symusic agree on them.
@Suite struct RealFilesDamagedTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/DamagedMIDI")

    static func read(_ name: String) throws -> StandardMIDIFile {
        try StandardMIDIFile(bytes: Array(try Data(contentsOf: folder.appendingPathComponent(name))))
    }

    /// Note-ons with velocity > 0, as `carillon inspect` and mido count them.
    static func notes(_ file: StandardMIDIFile) -> Int {
        file.allEvents.reduce(0) { n, e in
            if case .midi(.noteOn(let m)) = e, m.velocity.value > 0 { return n + 1 }
            return n
        }
    }

    /// Each file's notes as mido (`clip=True`) and symusic (`sanitize_data=True`) both count
    /// them — they refuse these files unless told to clamp data bytes over 127 — and, before
    /// issue 17, as Carillon did (its track stopped at the first such byte).
    @Test(arguments: [
        ("zipday.mid", 2189),           // was 0
        ("tork.mid", 796),              // was 2
        ("Journey-Lights.mid", 3149),   // was 2
        ("piccolo.mid", 33),            // was 0; masking velocity 0x80 to 0 would give 31
        ("ValueError_Control168.mid", 6432),  // was 6230
    ])
    func highDataBytes_notesAsPeersCount(_ name: String, _ expected: Int) throws {
        let file = try Self.read(name)
        #expect(Self.notes(file) == expected, "\(name)")
        #expect(file.warnings.contains { $0.message.contains("over 127 read as 127") }, "\(name): \(file.warnings)")
        #expect(!file.warnings.contains { $0.message.contains("no end-of-track") }, "\(name): \(file.warnings)")
    }

    @Test func declaredZeroTracks_noneRead() throws {
        // mido and symusic (and FluidSynth's player) read no track: 0 notes, where Carillon
        // played all 1,756.
        let file = try Self.read("arkanoid-zero-tracks-declared.mid")
        #expect(file.tracks.isEmpty)
        #expect(Self.notes(file) == 0)
        #expect(file.warnings.map(\.message) == ["header declares 0 tracks: 1 track chunk not read"])
    }

    @Test func messagesCutShortBeforeEndOfTrack_tracksEnd() throws {
        // Nine tracks end "… 3C FF 2F 00": a note message without its velocity, then the end
        // of track. Read as data, FF would make 2F a delta and the track end inside a message;
        // read as the status it is, each of them ends where it should. (mido and symusic refuse
        // the file for other damage, so there is no count to agree on.)
        let file = try Self.read("WC2_13.MID")
        #expect(file.tracks.count == 11)
        let cut = file.warnings.filter { $0.message.hasSuffix("cut short by a status byte dropped (0xFF starts the next event)") }
        #expect(cut.compactMap(\.track) == Array(1...10).filter { $0 != 2 })
        for track in cut.compactMap(\.track) {
            #expect(file.tracks[track].events.last?.event == .meta(.endOfTrack), "track \(track)")
            #expect(!file.warnings.contains { $0.track == track && $0.message.contains("no end-of-track") }, "track \(track)")
        }
    }
}
