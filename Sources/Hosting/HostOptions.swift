import Controls
import Parameters
import Sampling

/// What a host plays besides the sampler and how it starts, the same for
/// `live`, `play` and `render`: the sampler's own settings, the channels the
/// oscillator takes, audio-file tracks, LV2 plugins and parameters' start values.
/// `HostAssembly` builds from it.
public struct HostOptions: Sendable {
    public var sampler = SamplerOptions()
    /// `--oscillator-channel`: MIDI channels (0...15) the oscillator plays instead of the sampler.
    public var oscillatorChannels: [Int] = []
    /// `--a4`: the oscillator's A4 and `tone.a4`'s start value, in Hz.
    public var a4 = 440.0
    /// `--track` (and a mapping's `tracks:`): audio files played with the piece, at most `maxTracks`.
    public var tracks: [String] = []
    /// `--insert STRIP=URI`: LV2 effects on the master and on strips, in order (see `HostAssembly`).
    public var inserts: [InsertSpec] = []
    /// `--instrument N=URI`: LV2 instruments playing MIDI channels instead of the sampler.
    public var instruments: [InstrumentSpec] = []
    /// `--plugin-state DIR`: the plugins' saved states (read at start; live and play write them at the end).
    public var pluginState: String?
    /// `--set NAME=VALUE`: parameters' values from the start (after the ones above).
    public var settings: [ParameterChange] = []
    public init() {}

    /// Live's period when not told (`--period`), in frames: also the block a take
    /// renders in (`render --take`) and its MIDI effects run in, so a take gives
    /// live's samples without flags.
    public static let defaultPeriodFrames = 256

    /// The audio-file tracks a host plays at most (each has a mixer strip, `track.N.*`).
    public static let maxTracks = ParameterAddress.maxTracks

    /// Opens `tracks` for output at `sampleRate`; `offline`: each waits for its decoder (a render).
    public func openTracks(sampleRate: Int, offline: Bool) throws(FileTrackError) -> [FileTrack] {
        try tracks.map { path throws(FileTrackError) in try FileTrack(path: path, sampleRate: sampleRate, waitsForDecoder: offline) }
    }

    /// The parameters these options set before anything runs: the sampler's
    /// effect levels, `--a4`, then `--set` (last, so it wins).
    public var startValues: [ParameterChange] {
        var changes = sampler.startValues
        if a4 != 440 { changes.append(ParameterChange(.tone(.a4), Float(a4))) }
        return changes + settings
    }
}
