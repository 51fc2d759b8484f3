import Engine
import MIDI

/// A Standard MIDI File ready to play: its score and what a player shows
/// about it (its first tempo, for `transport.tempo` in beats per minute).
public struct Piece: Sendable {
    public let path: String
    public let score: Score
    /// The file's first tempo in beats per minute (120 when it sets none).
    public let firstTempo: Double
    /// The file's tempo map (MIDI clock out and in count its beats).
    public let tempoMap: TempoMap
    /// Its time signatures (4/4 from the top until the first): the JACK transport's bars.
    public let timeSignatures: [TimeSignatureChange]

    public init(contentsOf path: String) throws(MIDIFileError) {
        let bytes = try readBytes(path)
        let file: StandardMIDIFile
        do { file = try StandardMIDIFile(bytes: bytes) } catch { throw .notReadable(path: path, error) }
        self.path = path
        score = Score(file)
        tempoMap = file.tempoMap
        timeSignatures = file.timeSignatures
        firstTempo = tempoMap.changes.first?.beatsPerMinute ?? 120
    }

    public var duration: Double { score.duration }
}
