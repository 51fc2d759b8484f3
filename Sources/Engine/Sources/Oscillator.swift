import Parameters

/// The oscillator instrument: a fixed pool of voices playing sine, square,
/// sawtooth, triangle or white noise from the MIDI channels routed to it
/// (`Renderer.route`), each through an ADSR envelope.
///
/// - Pitch: `a4 · 2^((note − 69 + bend + detune) / 12)`; pitch bend spans
///   ±2 semitones until RPN 0 (CC 101/100 = 0, data entry CC 6/38) sets the range.
/// - Band limits: square and sawtooth with PolyBLEP, the triangle's corners
///   with PolyBLAMP (as `ToneGenerator`'s kernels).
/// - No clicks: every envelope segment is a linear ramp of at least
///   `minimumTime`, so the envelope moves at most `1 / (minimumTime · rate)`
///   per sample; a voice stolen when all `voiceCount` are busy fades out over
///   `minimumTime` before its new note starts; a waveform change applies to
///   notes started after it (a sounding voice keeps its shape).
/// - Controllers: CC 64 sustain, 120 all sound off (fast fade), 121 reset, 123 all notes off.
///
/// Threads: `init` and `prepare` before rendering; `update`, `receive`,
/// `render` and `silence` on the render thread (no allocation, no locks).
public final class Oscillator {
    public static let voiceCount = 32
    /// The shortest envelope segment (attack, decay, release, steal fade), in seconds.
    public static let minimumTime = 0.001
    /// The pitch-bend range before RPN 0 sets one, in semitones.
    public static let defaultBendRange = 2.0

    public enum Waveform: Int, Sendable { case sine = 0, square = 1, sawtooth = 2, triangle = 3, noise = 4 }

    enum Stage: UInt8 { case idle, attack, decay, release, steal }

    struct Voice {
        var stage = Stage.idle
        var channel: UInt8 = 0
        var note: UInt8 = 0
        var waveform = Waveform.sine
        /// Held by the sustain pedal after its note-off.
        var sustained = false
        var gain: Float = 0
        var level: Float = 0
        var releaseStep: Float = 0
        var phase = 0.0
        var increment = 0.0
        var age: UInt64 = 0
        var noise: UInt32 = 0x9E37_79B9
        /// The note to start once the steal fade ends (note 255: none).
        var pendingNote: UInt8 = 255
        var pendingChannel: UInt8 = 0
        var pendingVelocity: UInt8 = 0
    }

    /// Per MIDI channel: bend in semitones, bend range, RPN selection, sustain pedal.
    struct ChannelState {
        var bendValue: Int = 8192
        var bendRange = Oscillator.defaultBendRange
        var rpnMSB: UInt8 = 127
        var rpnLSB: UInt8 = 127
        var sustain = false
        var bend: Double { Double(bendValue - 8192) / 8192 * bendRange }
    }

    private let voices: UnsafeMutablePointer<Voice>
    private let channels: UnsafeMutablePointer<ChannelState>
    private var ages: UInt64 = 0

    public private(set) var sampleRate = 44_100.0
    /// The frequency of MIDI note 69, in Hz. Set before rendering.
    public var a4 = 440.0
    // Settings from the parameter table, refreshed once per block by `update`.
    private var waveform = Waveform.sine
    private var attack = 0.005, decay = 0.1, release = 0.1
    private var sustain: Float = 0.7
    private var detune = 0.0

    public init() {
        voices = .allocate(capacity: Self.voiceCount)
        voices.initialize(repeating: Voice(), count: Self.voiceCount)
        for i in 0..<Self.voiceCount { voices[i].noise = 0x9E37_79B9 &+ UInt32(i) &* 0x85EB_CA6B }
        channels = .allocate(capacity: 16)
        channels.initialize(repeating: ChannelState(), count: 16)
    }

    deinit {
        voices.deallocate()
        channels.deallocate()
    }

    /// Not on the render thread: every voice stops, every channel resets.
    public func prepare(sampleRate: Double) {
        if ToneGenerator.sampleRateRange.contains(sampleRate) { self.sampleRate = sampleRate }
        for i in 0..<Self.voiceCount { voices[i].stage = .idle; voices[i].pendingNote = 255 }
        for c in 0..<16 { channels[c] = ChannelState() }
    }

    /// Voices sounding (or fading). Render thread, or while it is idle.
    public var activeVoices: Int {
        var n = 0
        for i in 0..<Self.voiceCount where voices[i].stage != .idle { n += 1 }
        return n
    }

    /// Reads the `osc.*` settings from the store. Render thread, once per block.
    public func update(from parameters: ParameterStore) {
        // The table's range and default (ParameterTable): the one clamp.
        func value(_ p: ParameterAddress.Osc) -> Double {
            let spec = ParameterAddress.osc(p).spec
            return spec.clamp(Double(parameters.read(ParameterAddress.osc(p).index).value)) ?? spec.defaultValue
        }
        waveform = Waveform(rawValue: Int(value(.waveform))) ?? .sine
        attack = value(.attack)
        decay = value(.decay)
        release = value(.release)
        sustain = Float(value(.sustain))
        let newDetune = value(.detune)
        if newDetune != detune {
            detune = newDetune
            for i in 0..<Self.voiceCount where voices[i].stage != .idle { retune(&voices[i]) }
        }
    }

    // MARK: Events

    /// Applies one channel message now. Render thread.
    public func receive(_ message: ChannelMessage) {
        let channel = UInt8(message.channel)
        switch message.kind {
        case 0x90 where message.data2 > 0: noteOn(message.data1, velocity: message.data2, channel: channel)
        case 0x80, 0x90: noteOff(message.data1, channel: channel)
        case 0xB0: controlChange(message.data1, message.data2, channel: channel)
        case 0xE0:
            channels[Int(channel)].bendValue = Int(message.data1) | Int(message.data2) << 7
            retuneChannel(channel)
        default: break
        }
    }

    /// Every voice fades out over `minimumTime` (all sound off everywhere). Render thread.
    public func silence() {
        for i in 0..<Self.voiceCount { fadeOut(&voices[i]) }
    }

    private func noteOn(_ note: UInt8, velocity: UInt8, channel: UInt8) {
        // A key struck again while it sounds: the old voice releases.
        for i in 0..<Self.voiceCount where voices[i].channel == channel && voices[i].note == note
            && (voices[i].stage == .attack || voices[i].stage == .decay) {
            startRelease(&voices[i])
        }
        for i in 0..<Self.voiceCount where voices[i].stage == .idle {
            start(&voices[i], note: note, velocity: velocity, channel: channel)
            return
        }
        // All busy: steal the oldest voice not already waiting to start a note.
        var oldest = -1
        for i in 0..<Self.voiceCount where voices[i].pendingNote == 255 {
            if oldest < 0 || voices[i].age < voices[oldest].age { oldest = i }
        }
        if oldest < 0 { oldest = 0 }
        fadeOut(&voices[oldest])
        voices[oldest].pendingNote = note
        voices[oldest].pendingChannel = channel
        voices[oldest].pendingVelocity = velocity
    }

    private func noteOff(_ note: UInt8, channel: UInt8) {
        let held = channels[Int(channel)].sustain
        for i in 0..<Self.voiceCount {
            if voices[i].pendingNote == note && voices[i].pendingChannel == channel {
                voices[i].pendingNote = 255   // ended before it could start
            }
            guard voices[i].channel == channel, voices[i].note == note,
                  voices[i].stage == .attack || voices[i].stage == .decay else { continue }
            if held { voices[i].sustained = true } else { startRelease(&voices[i]) }
        }
    }

    private func controlChange(_ controller: UInt8, _ value: UInt8, channel: UInt8) {
        let c = Int(channel)
        switch controller {
        case 64:
            channels[c].sustain = value >= 64
            if value < 64 {
                for i in 0..<Self.voiceCount where voices[i].channel == channel && voices[i].sustained {
                    startRelease(&voices[i])
                }
            }
        case 101: channels[c].rpnMSB = value
        case 100: channels[c].rpnLSB = value
        case 6 where channels[c].rpnMSB == 0 && channels[c].rpnLSB == 0:
            channels[c].bendRange = Double(value) + (channels[c].bendRange - channels[c].bendRange.rounded(.down))
            retuneChannel(channel)
        case 38 where channels[c].rpnMSB == 0 && channels[c].rpnLSB == 0:
            channels[c].bendRange = channels[c].bendRange.rounded(.down) + Double(min(value, 99)) / 100
            retuneChannel(channel)
        case 120:
            for i in 0..<Self.voiceCount where voices[i].channel == channel || voices[i].pendingChannel == channel {
                if voices[i].pendingChannel == channel { voices[i].pendingNote = 255 }
                if voices[i].channel == channel { fadeOut(&voices[i]) }
            }
        case 121:
            channels[c].bendValue = 8192
            channels[c].rpnMSB = 127; channels[c].rpnLSB = 127
            retuneChannel(channel)
            controlChange(64, 0, channel: channel)
        case 123:
            for i in 0..<Self.voiceCount where voices[i].channel == channel
                && (voices[i].stage == .attack || voices[i].stage == .decay) {
                voices[i].sustained = false
                startRelease(&voices[i])
            }
        default: break
        }
    }

    private func start(_ v: inout Voice, note: UInt8, velocity: UInt8, channel: UInt8) {
        ages &+= 1
        v.stage = .attack
        v.channel = channel
        v.note = note
        v.waveform = waveform
        v.sustained = false
        v.gain = Float(velocity) / 127
        v.level = 0
        v.phase = 0
        v.age = ages
        v.pendingNote = 255
        retune(&v)
    }

    private func startRelease(_ v: inout Voice) {
        v.stage = .release
        v.sustained = false
        v.releaseStep = max(v.level, 1e-6) / Float(release * sampleRate)
    }

    private func fadeOut(_ v: inout Voice) {
        guard v.stage != .idle else { return }
        v.stage = .steal
        v.releaseStep = max(v.level, 1e-6) / Float(Self.minimumTime * sampleRate)
    }

    private func retuneChannel(_ channel: UInt8) {
        for i in 0..<Self.voiceCount where voices[i].stage != .idle && voices[i].channel == channel {
            retune(&voices[i])
        }
    }

    /// The phase increment for the voice's note, bend and detune, kept below
    /// 0.45 cycles per sample (PolyBLEP needs less than half).
    private func retune(_ v: inout Voice) {
        let semitones = Double(v.note) - 69 + channels[Int(v.channel)].bend + detune
        let hz = a4 * ToneGenerator.exp2(semitones / 12)
        v.increment = min(max(hz / sampleRate, 0), 0.45)
    }

    /// The frequency a note plays at now, in Hz (for tests and displays).
    public func frequency(note: UInt8, channel: Int = 0) -> Double {
        a4 * ToneGenerator.exp2((Double(note) - 69 + channels[channel & 15].bend + detune) / 12)
    }

    // MARK: Render

    /// Adds `frames` frames of every sounding voice (mono) into `left` and
    /// `right`. Render thread.
    public func render(frames: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        guard frames > 0 else { return }
        let attackStep = Float(1 / (attack * sampleRate))
        let decayStep = Float(1 / (decay * sampleRate))
        let sustainLevel = sustain
        for i in 0..<Self.voiceCount where voices[i].stage != .idle {
            var v = voices[i]
            var n = 0
            while n < frames {
                if v.stage == .idle {
                    // A steal fade ended: its pending note starts here, or the voice rests.
                    guard v.pendingNote != 255 else { break }
                    start(&v, note: v.pendingNote, velocity: v.pendingVelocity, channel: v.pendingChannel)
                }
                let sample = Self.sample(&v)
                switch v.stage {
                case .attack:
                    v.level += attackStep
                    if v.level >= 1 { v.level = 1; v.stage = .decay }
                case .decay:
                    // Towards the sustain level at the decay rate, either way (a moved sustain glides).
                    if v.level > sustainLevel { v.level = max(sustainLevel, v.level - decayStep) }
                    else if v.level < sustainLevel { v.level = min(sustainLevel, v.level + decayStep) }
                case .release, .steal:
                    v.level -= v.releaseStep
                    if v.level <= 0 { v.level = 0; v.stage = .idle }
                case .idle: break
                }
                let out = sample * v.gain * v.level
                left[n] += out
                right[n] += out
                n += 1
            }
            voices[i] = v
        }
    }

    /// The voice's next waveform sample; advances its phase.
    @inline(__always)
    private static func sample(_ v: inout Voice) -> Float {
        let p = v.phase, dt = v.increment
        let s: Float
        switch v.waveform {
        case .sine: s = ToneGenerator.sine(p)
        case .sawtooth: s = Float(2 * p - 1 - ToneGenerator.polyBLEP(p, dt))
        case .square:
            var q = p + 0.5; if q >= 1 { q -= 1 }
            s = Float((p < 0.5 ? 1.0 : -1.0) + ToneGenerator.polyBLEP(p, dt) - ToneGenerator.polyBLEP(q, dt))
        case .triangle:
            // Corners at 0 (slope −4 → +4 per cycle) and ½ (+4 → −4): PolyBLAMP rounds them.
            // The weight 4·dt measured best (note 100 at 48 kHz: −53 dB aliasing, naive −38 dB).
            var q = p + 0.5; if q >= 1 { q -= 1 }
            s = Float(4 * abs(p - 0.5) - 1 - 4 * dt * (polyBLAMP(p, dt) - polyBLAMP(q, dt)))
        case .noise:
            // xorshift32: white, uniform in −1 ..< 1.
            var x = v.noise
            x ^= x << 13; x ^= x >> 17; x ^= x << 5
            v.noise = x
            s = Float(Int32(bitPattern: x)) * (1 / 2_147_483_648)
        }
        var next = p + dt
        if next >= 1 { next -= 1 }
        v.phase = next
        return s
    }

    /// The two-sample PolyBLAMP residual of a unit slope change at phase 0 (in samples).
    @inline(__always)
    static func polyBLAMP(_ t: Double, _ dt: Double) -> Double {
        if t < dt {
            let x = t / dt - 1
            return -x * x * x / 3
        } else if t > 1 - dt {
            let x = (t - 1) / dt + 1
            return x * x * x / 3
        }
        return 0
    }
}
