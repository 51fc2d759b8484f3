import Engine
import LV2

/// An LV2 instrument playing one MIDI channel (`--instrument N=URI`): the
/// channel's messages go into the plugin's MIDI input at their offsets in the
/// block, and one `run` renders the block. Its first audio output is the
/// strip's left, its second the right; a mono instrument sounds in both
/// (centred); outputs beyond two are left unheard (said at load).
final class LV2ChannelInstrument: ChannelPlugin {
    private let instance: LV2Instance
    private let controls: PluginControls
    private let channel: UInt8
    /// The audio ports' buffers for `run`: inputs the instance's own (silence),
    /// outputs the strip's left and right (set each block), the rest its own.
    private let inputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let outputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let stereo: Bool

    init(host: PluginHost, uri: String, channel: Int, sampleRate: Int, maxFrames: Int, offline: Bool,
         controls bindings: [PluginControls.Binding], parameters: ParameterStore, prefix: String) throws(LV2Error) {
        instance = try LV2Instance(world: host.world, uri: uri, sampleRate: Double(sampleRate), maxFrames: maxFrames,
                                   urids: host.urids, offline: offline)
        try Self.check(instance.info)
        self.channel = UInt8(channel)
        stereo = instance.audioOutputs.count > 1
        inputs = .allocate(capacity: max(1, instance.audioInputs.count))
        outputs = .allocate(capacity: instance.audioOutputs.count)
        for (k, buffer) in instance.audioInputs.enumerated() { inputs[k] = buffer }
        for (k, buffer) in instance.audioOutputs.enumerated() { outputs[k] = buffer }
        controls = PluginControls(bindings, instances: [instance], store: parameters)
        if let k = instance.info.freeWheelingControl { instance.setControl(at: k, to: offline ? 1 : 0) }
        host.prepare(instance, prefix: prefix)
        instance.activate()
        instance.primeLatency()
        // Offline, one silent run first: what the plugin asks its worker for at
        // the start (avldrums loads its kit) is done by then, so the piece's
        // first notes sound (live, the worker's thread has the time the output takes to start).
        if offline && instance.usesWorker {
            instance.run(frames: maxFrames)
        }
    }

    /// An instrument: a MIDI input and at least one audio output, no feature Carillon lacks.
    static func check(_ info: LV2PluginInfo) throws(LV2Error) {
        try LV2Instance.checkFeatures(info)
        guard info.midiInputs > 0, info.audioOutputs > 0 else {
            throw LV2Error(kind: .unsuitable(plugin: info.uri, reason: "an instrument takes MIDI in and gives audio out;"
                + " this one has \(info.midiInputs) MIDI inputs and \(info.audioOutputs) audio outputs"
                + (info.kind == .effect ? " (an effect: use --insert)" : "")), function: "LV2ChannelInstrument")
        }
    }

    /// As the plugin reported it at its last run (from its start: `primeLatency`).
    var latency: Int { instance.latency }

    func receive(_ message: ChannelMessage, at offset: Int) {
        let kind = message.status & 0xF0
        instance.appendMIDI(frame: min(offset, instance.maxFrames - 1), status: message.status, message.data1, message.data2,
                            count: kind == 0xC0 || kind == 0xD0 ? 2 : 3)
    }

    deinit {
        inputs.deallocate(); outputs.deallocate()
    }

    /// The plugin writes straight into the strip's buffers (no copy: measured
    /// against lv2bench, a copy cost more than an idle instrument's own run).
    func render(frames: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        controls.update()
        outputs[0] = left
        if stereo { outputs[1] = right }
        instance.run(frames: frames, inputs: inputs, outputs: outputs)
        if !stereo { right.update(from: left, count: frames) }
    }

    /// All sound off and all notes off at the next block's first frame (the MIDI input is empty between blocks).
    func silence() {
        instance.appendMIDI(frame: 0, status: 0xB0 | channel, 120, 0, count: 3)
        instance.appendMIDI(frame: 0, status: 0xB0 | channel, 123, 0, count: 3)
    }
}
