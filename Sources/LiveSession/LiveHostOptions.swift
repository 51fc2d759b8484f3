import Hosting
import SoundFile

extension LiveHost {
    public struct Options: Sendable {
        public var clientName = "carillon"
        /// `--connect`: `client:port` or name substrings.
        public var connect: [String] = []
        /// `--autoconnect`: every source now and every one that appears later.
        public var autoconnect = false
        /// `--feedback`: destinations (`client:port` or name substrings) the
        /// feedback port sends the controls' state to; empty: the mapping's `port:`.
        public var feedback: [String] = []
        public var audio = true
        /// `-a`: the ALSA PCM device (`device`, `sampleRate`, `periodFrames`, `periods`) or a
        /// JACK client (the server's rate and period; `jack` says what to connect).
        public var backend = AudioBackend.alsa
        public var jack = JACKOptions()
        public var device = "default"
        public var sampleRate = 48_000
        public var periodFrames = HostOptions.defaultPeriodFrames
        public var periods = 2
        public var host = HostOptions()
        public var realtime = true
        /// `--timing`: events stamped on arrival and played a period later, or at once.
        public var timing = EventTiming.stamped
        /// The mapping file to watch: when it changes it is loaded again and, if
        /// it has no mistakes, swapped in (`ControlHub.replace`); if it has, the
        /// running mapping stays and every mistake goes to the log. Nil: no watch.
        public var watchMapping: String?
        /// Log every parameter change a control makes (plain, non-terminal output).
        public var logParameterChanges = false
        /// `live` (unless `--whole-font`): only the presets the rig names have their
        /// samples loaded at start, the others load as they are selected
        /// (`OnDemandPresets`); false (`play`, `live --whole-font`): the whole font.
        public var presetsOnDemand = false
        /// Play on without MIDI input when the sequencer cannot be opened
        /// (a player: the file is the point). Without audio it always is optional.
        public var inputOptional = false
        /// `--record`: what the output plays, written to this file (with audio).
        public var record: RecordTarget?
        /// `--record-midi`: the MIDI that comes in, as a Standard MIDI File written on stop.
        public var recordMIDI: String?
        /// `--clock-out`: destinations MIDI clock goes to (`client:port` or names, as `--connect`).
        public var clockOut: [String] = []
        /// `play --sync clock[=PORT]`: follow MIDI clock from PORT ("": from any source connected).
        public var syncClock: String?
        /// `play --sync jack` (with `-a jack`): follow the JACK transport.
        public var syncJACK = false
        /// `--transport-master` (with `-a jack`): lead the JACK transport — `play` with the piece's
        /// bars and tempo, `live` in 4/4 at `transport.tempo` (the beats `--clock-out` counts).
        public var transportMaster = false
        /// `--link`: a peer in the Ableton Link session (tempo shared, the piece on its bars).
        public var link = false
        /// `--give-up-after`: seconds without audio (the device or server gone and not
        /// back) before the session ends with `Status.failure`; nil: it retries for ever.
        public var giveUpAfter: Double?
        public init() {}
    }

    /// An audio file to record into.
    public struct RecordTarget: Sendable {
        public var path: String
        public var format: AudioFileFormat
        public var encoding: SampleEncoding?
        public init(path: String, format: AudioFileFormat, encoding: SampleEncoding? = nil) {
            self.path = path; self.format = format; self.encoding = encoding
        }
    }
}
