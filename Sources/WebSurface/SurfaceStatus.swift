/// What the page's status line shows of a host: load, counters, meters and
/// the spectrum. The host fills it (the CLI maps `LiveHost.Status` onto it), so
/// the surface depends on this small type and not on the host.
public struct SurfaceStatus: Sendable, Equatable {
    /// Mean render time over the period's budget (0…1+).
    public var load: Double
    public var xruns: Int
    public var blocks: Int
    /// Voices the sampler is playing.
    public var voices: Int
    /// The master's last block peak and RMS (linear).
    public var peak: Float
    public var rms: Float
    /// Each strip's last block peak (linear), in the order `stripNames` names them.
    public var stripPeaks: [Float]
    /// The strips' short names (`1`…`16`, `osc`, `tone`, `reverb`, `chorus`, the tracks').
    public var stripNames: [String]
    /// The strips' stable keys (`1`…`16`, `osc`, `tone`, `reverb`, `chorus`, `track1`…): a group's meter finds its strip by it.
    public var stripKeys: [String]
    /// The master's spectrum: dB per third-octave band; empty without audio.
    public var spectrum: [Float]
    /// Messages lost because the render thread's queue was full.
    public var queueOverflows: Int
    /// Parameter values refused (NaN, infinity) before they reached the engine.
    public var refusedParameters: Int
    /// What the transport is in time with: "following 24:0 'Digitakt' at 120.0 BPM",
    /// "leading the JACK transport at 80.0 BPM"; nil when it keeps its own time.
    public var sync: String?
    /// "no audio: REASON, retrying" while the output is gone; nil while it plays.
    public var audio: String?

    public init(load: Double, xruns: Int, blocks: Int, voices: Int, peak: Float, rms: Float,
                stripPeaks: [Float] = [], stripNames: [String] = [], stripKeys: [String] = [], spectrum: [Float] = [],
                queueOverflows: Int = 0, refusedParameters: Int = 0, sync: String? = nil, audio: String? = nil) {
        self.sync = sync
        self.audio = audio
        self.load = load; self.xruns = xruns; self.blocks = blocks; self.voices = voices
        self.peak = peak; self.rms = rms; self.stripPeaks = stripPeaks; self.stripNames = stripNames
        self.stripKeys = stripKeys
        self.spectrum = spectrum; self.queueOverflows = queueOverflows; self.refusedParameters = refusedParameters
    }
}
