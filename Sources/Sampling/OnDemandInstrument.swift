import Engine
import FluidSynth
import Parameters

/// Live's FluidSynth instrument with presets loaded as they are selected
/// (`OnDemandPresets`): a program change whose preset is pinned goes to the
/// synth at once; one whose preset is not waits on its channel, the loader is
/// asked for it, and it is sent at the first block's start after its samples
/// are in memory. Meanwhile the channel plays what it played (held notes keep
/// sounding; new notes play the preset before), and bank selects after the
/// waiting program change wait behind it. A later program change on the channel
/// replaces a waiting one (which never sounded). While the loader's window is
/// open, every program change and SysEx waits (SysEx in a small store of its own).
///
/// Threads: built before rendering; then only the render thread calls it.
public final class OnDemandInstrument: Instrument {
    public let base: FluidSynthInstrument
    public let presets: OnDemandPresets

    /// Per channel: the waiting program change (-1: none) and the bank selects
    /// (CC 0, CC 32; -1: none) that came after it.
    private let waitingProgram: UnsafeMutablePointer<Int16>
    private let bankAfter: UnsafeMutablePointer<Int16>
    /// Channels (bit c) with a waiting program change.
    private var waiting: UInt16 = 0

    /// SysEx held while the window is open: up to `sysExSlots` messages of up
    /// to `sysExBytes` bytes; more are refused (counted as FluidSynth's refusals).
    private static let sysExSlots = 4, sysExBytes = 512
    private let sysExStore: UnsafeMutablePointer<UInt8>
    private let sysExLengths: UnsafeMutablePointer<Int>
    private var sysExHeld = 0

    public init(base: FluidSynthInstrument, presets: OnDemandPresets) {
        self.base = base
        self.presets = presets
        sysExStore = .allocate(capacity: Self.sysExSlots * Self.sysExBytes)
        sysExLengths = .allocate(capacity: Self.sysExSlots)
        sysExLengths.initialize(repeating: 0, count: Self.sysExSlots)
        waitingProgram = .allocate(capacity: 16)
        waitingProgram.initialize(repeating: -1, count: 16)
        bankAfter = .allocate(capacity: 32)
        bankAfter.initialize(repeating: -1, count: 32)
    }

    deinit {
        sysExStore.deallocate(); sysExLengths.deallocate(); waitingProgram.deallocate(); bankAfter.deallocate()
    }

    public var stripCount: Int { base.stripCount }
    public var eventGranularity: Int { base.eventGranularity }
    public var effectsGroupCount: Int { base.effectsGroupCount }

    public func prepare(sampleRate: Double, maxFrames: Int) { base.prepare(sampleRate: sampleRate, maxFrames: maxFrames) }

    public func receive(_ message: ChannelMessage) {
        let channel = Int(message.channel)
        switch message.kind {
        case 0xC0:
            if waiting & 1 << channel != 0 {
                // The waiting one never sounded: its later bank selects now come before this one.
                sendBanksAfter(channel)
                waitingProgram[channel] = Int16(message.data1)
                return
            }
            if presets.windowOpen() { hold(channel, program: message.data1); return }
            if let target = presets.target(channel: channel, program: Int(message.data1)), presets.state(target) != .ready {
                presets.request(target)
                hold(channel, program: message.data1)
                return
            }
            base.receive(message)
            presets.checkSelected(onChannel: channel)
        case 0xB0 where (message.data1 == 0 || message.data1 == 32) && waiting & 1 << channel != 0:
            bankAfter[2 * channel + (message.data1 == 0 ? 0 : 1)] = Int16(message.data2)
        default:
            base.receive(message)
        }
    }

    private func hold(_ channel: Int, program: UInt8) {
        waitingProgram[channel] = Int16(program)
        waiting |= 1 << channel
    }

    private func sendBanksAfter(_ channel: Int) {
        for slot in 0..<2 where bankAfter[2 * channel + slot] >= 0 {
            base.receive(ChannelMessage(status: 0xB0 | UInt8(channel), data1: slot == 0 ? 0 : 32,
                                        data2: UInt8(bankAfter[2 * channel + slot])))
            bankAfter[2 * channel + slot] = -1
        }
    }

    public func render(frames: Int,
                       dry: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>,
                       effects: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>) {
        if !presets.windowOpen() {
            if sysExHeld > 0 { sendHeldSysEx() }
            if waiting != 0 { sendReady() }
        }
        base.render(frames: frames, dry: dry, effects: effects)
    }

    /// Sends each waiting program change whose preset is ready (asking for the others).
    private func sendReady() {
        for channel in 0..<16 where waiting & 1 << channel != 0 {
            let program = Int(waitingProgram[channel])
            if let target = presets.target(channel: channel, program: program), presets.state(target) != .ready {
                presets.request(target)
                continue
            }
            base.receive(ChannelMessage(status: 0xC0 | UInt8(channel), data1: UInt8(program), data2: 0))
            presets.checkSelected(onChannel: channel)
            sendBanksAfter(channel)
            waitingProgram[channel] = -1
            waiting &= ~(1 << channel)
        }
    }

    private func sendHeldSysEx() {
        for slot in 0..<sysExHeld {
            base.receiveSysEx(UnsafeBufferPointer(start: sysExStore + slot * Self.sysExBytes, count: sysExLengths[slot]))
        }
        sysExHeld = 0
        for channel in 0..<16 { presets.checkSelected(onChannel: channel) }
    }

    public func silence() { base.silence() }

    public func receiveSysEx(_ data: UnsafeBufferPointer<UInt8>) {
        guard presets.windowOpen() || sysExHeld > 0 else {
            base.receiveSysEx(data)
            for channel in 0..<16 { presets.checkSelected(onChannel: channel) }
            return
        }
        guard sysExHeld < Self.sysExSlots, data.count <= Self.sysExBytes, let bytes = data.baseAddress else {
            base.countRefusal()
            return
        }
        (sysExStore + sysExHeld * Self.sysExBytes).update(from: bytes, count: data.count)
        sysExLengths[sysExHeld] = data.count
        sysExHeld += 1
    }

    public func setEffect(_ effect: SynthEffect, to value: Float) { base.setEffect(effect, to: value) }
    public func finishBlock() { base.finishBlock() }
    public var blocksInFlight: Int { base.blocksInFlight }
    public func collectBlock() { base.collectBlock() }
}
