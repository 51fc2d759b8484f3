import CALSA
import Glibc
import Synchronization

/// Interleaved playback on one ALSA PCM device, with the recovery a live
/// instrument needs. `write` blocks until the device took the frames, but in
/// ALSA's non-blocking mode: it waits for room with `snd_pcm_wait` and a
/// timeout (`waitMilliseconds`), so another thread can `cancel` a write that
/// waits on a device which went away without an error (seen in the VM soak:
/// a blocking `snd_pcm_writei` that never returned). An underrun (`-EPIPE`) is counted and
/// the device prepared again, a suspend (`-ESTRPIPE`) resumed or prepared,
/// `-EAGAIN` waited out. Xruns are counted, never fatal — unless recovery
/// after recovery lets no frame through (`maxFruitlessRecoveries`): then, as for
/// `-EIO` and `-ENODEV` (an unplugged device), `write` returns the error.
///
/// Threads: open it on any thread; `write` belongs to one output (render)
/// thread and neither allocates, locks nor throws; `xruns` may be read from
/// any thread, and `cancel` called from any. Deinit drops what is queued and closes the device.
public final class PCMPlayback: @unchecked Sendable {
    /// Sample formats, in the order Carillon prefers them.
    public enum SampleFormat: String, Sendable, CaseIterable, CustomStringConvertible {
        case float32 = "FLOAT_LE", int32 = "S32_LE", int16 = "S16_LE"
        var alsa: snd_pcm_format_t {
            switch self {
            case .float32: SND_PCM_FORMAT_FLOAT_LE
            case .int32: SND_PCM_FORMAT_S32_LE
            case .int16: SND_PCM_FORMAT_S16_LE
            }
        }
        var bytesPerSample: Int { self == .int16 ? 2 : 4 }
        public var description: String { rawValue }
    }

    public struct Configuration: Sendable, Equatable {
        /// ALSA PCM name: `default`, `hw:0`, `hw:Loopback,0`, `plughw:1,0`…
        public var device: String = "default"
        public var sampleRate: Int = 48_000
        public var channels: Int = 2
        /// Frames per period (the block the device wakes us for): `--period`.
        public var periodFrames: Int = 256
        /// Periods in the buffer: `--periods`.
        public var periods: Int = 2
        /// Formats to try, in order; the first the device takes is used.
        public var formats: [SampleFormat] = SampleFormat.allCases

        public init(device: String = "default", sampleRate: Int = 48_000, channels: Int = 2,
            periodFrames: Int = 256, periods: Int = 2, formats: [SampleFormat] = SampleFormat.allCases)
        {
            self.device = device; self.sampleRate = sampleRate; self.channels = channels
            self.periodFrames = periodFrames; self.periods = periods; self.formats = formats
        }
    }

    /// What was asked for.
    public let requested: Configuration
    /// What the device granted (ALSA picks the nearest rate/period it supports).
    public let sampleRate: Int
    public let channels: Int
    public let periodFrames: Int
    public let bufferFrames: Int
    public let format: SampleFormat
    public var periods: Int { bufferFrames / max(periodFrames, 1) }
    /// Seconds of audio one period holds: the render budget per block.
    public var periodDuration: Double { Double(periodFrames) / Double(sampleRate) }

    private let pcm: OpaquePointer
    private let counters = Counters()
    /// Conversion space for non-float formats, sized once at open.
    private let scratch: UnsafeMutableRawBufferPointer
    private let scratchFrames: Int

    private final class Counters: Sendable {
        let xruns = Atomic<Int>(0)
        let suspends = Atomic<Int>(0)
        let framesWritten = Atomic<Int>(0)
        let cancelled = Atomic<Bool>(false)
    }

    /// The longest a `write` waits for room at a time before it looks whether it was cancelled.
    public static let waitMilliseconds: Int32 = 100

    /// Makes a `write` on another thread, now or later, return at once or after
    /// at most `waitMilliseconds`, with an error `isCancellation` says is this.
    /// The device is no use for writing after it: close it. Any thread.
    public func cancel() { counters.cancelled.store(true, ordering: .releasing) }

    /// Underruns recovered from so far.
    public var xruns: Int { counters.xruns.load(ordering: .relaxed) }
    /// Suspends (`-ESTRPIPE`) recovered from so far.
    public var suspends: Int { counters.suspends.load(ordering: .relaxed) }
    /// Frames accepted by the device so far.
    public var framesWritten: Int { counters.framesWritten.load(ordering: .relaxed) }

    /// Opens and configures the device (interleaved, non-blocking writes). Throws
    /// `.pcmUnavailable` when the device cannot be opened, `.call` naming the
    /// `snd_pcm_hw_params_*` call for a setting it refuses.
    public init(_ config: Configuration) throws(ALSAError) {
        requested = config
        ALSALibrary.silenceErrorMessages()
        var handle: OpaquePointer?
        try check("snd_pcm_open", snd_pcm_open(&handle, config.device, SND_PCM_STREAM_PLAYBACK, 0),
            kind: .pcmUnavailable(device: config.device))
        guard let handle else { throw ALSAError(kind: .pcmUnavailable(device: config.device), function: "snd_pcm_open", code: -ENODEV) }
        pcm = handle
        do {
            let granted = try Self.configure(handle, config)
            (sampleRate, channels, periodFrames, bufferFrames, format) = granted
        } catch {
            snd_pcm_close(handle)
            throw error
        }
        scratchFrames = max(periodFrames, 1024)
        scratch = .allocate(byteCount: scratchFrames * channels * 4, alignment: 16)
    }

    deinit {
        snd_pcm_drop(pcm)
        snd_pcm_close(pcm)
        scratch.deallocate()
    }

    private static func configure(_ pcm: OpaquePointer, _ config: Configuration) throws(ALSAError)
        -> (Int, Int, Int, Int, SampleFormat)
    {
        let device = config.device
        var hw: OpaquePointer?
        try check("snd_pcm_hw_params_malloc", snd_pcm_hw_params_malloc(&hw))
        defer { snd_pcm_hw_params_free(hw) }
        try check("snd_pcm_hw_params_any", snd_pcm_hw_params_any(pcm, hw), context: device)
        try check("snd_pcm_hw_params_set_access", snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED),
            context: "interleaved access on \(device)")
        guard let format = config.formats.first(where: { snd_pcm_hw_params_test_format(pcm, hw, $0.alsa) == 0 }) else {
            throw ALSAError(function: "snd_pcm_hw_params_set_format", code: -EINVAL,
                context: "\(device) takes none of \(config.formats.map(\.rawValue).joined(separator: ", "))")
        }
        try check("snd_pcm_hw_params_set_format", snd_pcm_hw_params_set_format(pcm, hw, format.alsa), context: format.rawValue)
        try check("snd_pcm_hw_params_set_channels", snd_pcm_hw_params_set_channels(pcm, hw, UInt32(config.channels)),
            context: "\(config.channels) channels on \(device)")
        var rate = UInt32(config.sampleRate)
        var dir: Int32 = 0
        try check("snd_pcm_hw_params_set_rate_near", snd_pcm_hw_params_set_rate_near(pcm, hw, &rate, &dir),
            context: "\(config.sampleRate) Hz on \(device)")
        var period = snd_pcm_uframes_t(config.periodFrames)
        dir = 0
        try check("snd_pcm_hw_params_set_period_size_near", snd_pcm_hw_params_set_period_size_near(pcm, hw, &period, &dir),
            context: "\(config.periodFrames) frames on \(device)")
        var periods = UInt32(config.periods)
        dir = 0
        try check("snd_pcm_hw_params_set_periods_near", snd_pcm_hw_params_set_periods_near(pcm, hw, &periods, &dir),
            context: "\(config.periods) periods on \(device)")
        try check("snd_pcm_hw_params", snd_pcm_hw_params(pcm, hw), context: device)

        var buffer: snd_pcm_uframes_t = 0
        try check("snd_pcm_hw_params_get_period_size", snd_pcm_hw_params_get_period_size(hw, &period, &dir))
        try check("snd_pcm_hw_params_get_buffer_size", snd_pcm_hw_params_get_buffer_size(hw, &buffer))
        try check("snd_pcm_hw_params_get_rate", snd_pcm_hw_params_get_rate(hw, &rate, &dir))

        var sw: OpaquePointer?
        try check("snd_pcm_sw_params_malloc", snd_pcm_sw_params_malloc(&sw))
        defer { snd_pcm_sw_params_free(sw) }
        try check("snd_pcm_sw_params_current", snd_pcm_sw_params_current(pcm, sw))
        // Start once the buffer is full; wake when a period is free.
        try check("snd_pcm_sw_params_set_start_threshold", snd_pcm_sw_params_set_start_threshold(pcm, sw, buffer))
        try check("snd_pcm_sw_params_set_avail_min", snd_pcm_sw_params_set_avail_min(pcm, sw, period))
        try check("snd_pcm_sw_params", snd_pcm_sw_params(pcm, sw))
        try check("snd_pcm_prepare", snd_pcm_prepare(pcm), context: device)
        // Writes never block in the kernel: `writeFrames` waits with a timeout instead (see the type's comment).
        try check("snd_pcm_nonblock", snd_pcm_nonblock(pcm, 1), context: device)
        return (Int(rate), config.channels, Int(period), Int(buffer), format)
    }

    /// Plays `samples` (interleaved Float32, `channels` per frame, −1…1),
    /// blocking until the device took them all. Converts to the device's
    /// format when it is not float. Recovers from xruns and suspends (and
    /// counts them). Returns nil, or the error that made the device unusable
    /// (unplugged, closed): then stop writing.
    /// Real-time safe: no allocation, no lock, no throw.
    @discardableResult
    public func write(_ samples: UnsafeBufferPointer<Float>) -> ALSAError? {
        guard let base = samples.baseAddress else { return nil }
        let frames = samples.count / channels
        if format == .float32 {
            return writeFrames(UnsafeRawPointer(base), frames: frames)
        }
        var done = 0
        while done < frames {
            let n = min(frames - done, scratchFrames)
            let src = base + done * channels
            let count = n * channels
            switch format {
            case .int16:
                let dst = scratch.baseAddress!.assumingMemoryBound(to: Int16.self)
                for i in 0..<count { dst[i] = Int16(min(max(src[i], -1), 1) * 32767) }
            case .int32:
                let dst = scratch.baseAddress!.assumingMemoryBound(to: Int32.self)
                for i in 0..<count { dst[i] = Int32(Double(min(max(src[i], -1), 1)) * 2_147_483_647) }
            case .float32:
                break
            }
            if let error = writeFrames(UnsafeRawPointer(scratch.baseAddress!), frames: n) { return error }
            done += n
        }
        return nil
    }

    private func writeFrames(_ data: UnsafeRawPointer, frames: Int) -> ALSAError? {
        let frameBytes = channels * format.bytesPerSample
        var done = 0
        // Recoveries in a row that let no frame through: a device that "recovers" and fails again at once is gone.
        var fruitless = 0
        while done < frames {
            if counters.cancelled.load(ordering: .acquiring) {
                return ALSAError(function: "snd_pcm_writei", code: -ECANCELED, context: "\(requested.device): cancelled")
            }
            let rc = snd_pcm_writei(pcm, data + done * frameBytes, snd_pcm_uframes_t(frames - done))
            if rc >= 0 {
                done += rc
                if rc > 0 { fruitless = 0 }
                counters.framesWritten.add(rc, ordering: .relaxed)
                continue
            }
            if let error = recover(Int32(rc)) { return error }
            if rc != -EAGAIN && rc != -EINTR { fruitless += 1 }
            if fruitless >= Self.maxFruitlessRecoveries {
                return ALSAError(function: "snd_pcm_writei", code: Int32(rc),
                                 context: "\(requested.device): \(fruitless) recoveries in a row and no frame written")
            }
        }
        return nil
    }

    /// Recoveries in a row with no frame written before `write` gives the device up.
    public static let maxFruitlessRecoveries = 8

    /// The recovery of one failed write; nil when writing may go on.
    private func recover(_ code: Int32) -> ALSAError? {
        switch code {
        case -EAGAIN:
            // No room yet: wait for a period, or time out and look at `cancelled` again. An error here
            // (an xrun, a device gone) is the next `snd_pcm_writei`'s to report.
            _ = snd_pcm_wait(pcm, Self.waitMilliseconds)
            return nil
        case -EINTR:
            return nil
        case -EPIPE, -EBADFD:
            counters.xruns.add(1, ordering: .relaxed)
            let rc = snd_pcm_prepare(pcm)
            return rc < 0 ? ALSAError(function: "snd_pcm_prepare", code: rc) : nil
        case -ESTRPIPE:
            counters.suspends.add(1, ordering: .relaxed)
            var rc = snd_pcm_resume(pcm)
            while rc == -EAGAIN {
                usleep(10_000)
                rc = snd_pcm_resume(pcm)
            }
            if rc < 0 { rc = snd_pcm_prepare(pcm) }
            return rc < 0 ? ALSAError(function: "snd_pcm_prepare", code: rc) : nil
        default:
            return ALSAError(function: "snd_pcm_writei", code: code)
        }
    }

    /// Plays what is queued, then stops (end of a clean shutdown): blocking (non-blocking, `snd_pcm_drain` would return at once).
    public func drain() throws(ALSAError) {
        try check("snd_pcm_nonblock", snd_pcm_nonblock(pcm, 0))
        try check("snd_pcm_drain", snd_pcm_drain(pcm))
    }

    /// Frames queued in the device and not yet played (for latency figures).
    public func delayFrames() -> Int? {
        var delay: snd_pcm_sframes_t = 0
        return snd_pcm_delay(pcm, &delay) < 0 ? nil : delay
    }

    /// `hw:Loopback,0: FLOAT_LE 48000 Hz 2 ch, period 64 × 2 (2.7 ms)`.
    public var summary: String {
        let ms = (periodDuration * 10_000).rounded() / 10
        return "\(requested.device): \(format) \(sampleRate) Hz \(channels) ch, period \(periodFrames) × \(periods) (\(ms) ms)"
    }
}
