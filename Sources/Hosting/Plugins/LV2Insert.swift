import Engine
import LV2

/// An LV2 effect as a master insert: a stereo plugin (two audio inputs and
/// outputs) runs once per block; a mono one (one in, one out) runs as two
/// instances, one a side. The plugin reads and writes the mixer's buffers in
/// place; one that may not (`lv2:inPlaceBroken`) writes its own, copied back.
final class LV2Insert: AudioInsert {
    private let instances: [LV2Instance]
    private let controls: PluginControls
    /// Per instance: the buffers it reads and writes this block (set in `process`, read by the plugin).
    private let inputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let outputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>

    init(host: PluginHost, uri: String, sampleRate: Int, maxFrames: Int, offline: Bool,
         controls bindings: [PluginControls.Binding], parameters: ParameterStore, prefix: String) throws(LV2Error) {
        let first = try LV2Instance(world: host.world, uri: uri, sampleRate: Double(sampleRate), maxFrames: maxFrames,
                                    urids: host.urids, offline: offline)
        let info = first.info
        try Self.check(info)
        instances = info.audioInputs == 2 ? [first] : [first, try LV2Instance(world: host.world, uri: uri, sampleRate: Double(sampleRate),
                                                                           maxFrames: maxFrames, urids: host.urids, offline: offline)]
        for instance in instances {
            if let k = info.freeWheelingControl { instance.setControl(at: k, to: offline ? 1 : 0) }
            host.prepare(instance, prefix: prefix)
            instance.activate()
            instance.primeLatency()
        }
        controls = PluginControls(bindings, instances: instances, store: parameters)
        inputs = .allocate(capacity: 2)
        outputs = .allocate(capacity: 2)
    }

    deinit {
        inputs.deallocate()
        outputs.deallocate()
    }

    /// As the plugin reported it at its last run (from its start: `primeLatency`).
    var latency: Int { instances[0].latency }

    /// An effect with 1 or 2 audio inputs and as many outputs, and no feature Carillon lacks.
    static func check(_ info: LV2PluginInfo) throws(LV2Error) {
        try LV2Instance.checkFeatures(info)
        guard (1...2).contains(info.audioInputs), info.audioOutputs == info.audioInputs else {
            throw LV2Error(kind: .unsuitable(plugin: info.uri, reason: "an insert takes an effect with 1 or 2 audio inputs and as many outputs;"
                + " this one has \(info.audioInputs) in and \(info.audioOutputs) out"), function: "LV2Insert")
        }
    }

    func process(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, frames: Int) {
        controls.update()
        if instances.count == 1 {
            run(instances[0], frames: frames, left, right)
        } else {
            run(instances[0], frames: frames, left, nil)
            run(instances[1], frames: frames, right, nil)
        }
    }

    /// One instance on `first` (and `second`: a stereo plugin's right side).
    /// No array is built here: the render thread's rule.
    @inline(__always)
    private func run(_ p: LV2Instance, frames: Int, _ first: UnsafeMutablePointer<Float>, _ second: UnsafeMutablePointer<Float>?) {
        inputs[0] = first
        outputs[0] = p.inPlaceBroken ? p.audioOutputs[0] : first
        if let second {
            inputs[1] = second
            outputs[1] = p.inPlaceBroken ? p.audioOutputs[1] : second
        }
        p.run(frames: frames, inputs: inputs, outputs: outputs)
        if p.inPlaceBroken {
            first.update(from: p.audioOutputs[0], count: frames)
            second?.update(from: p.audioOutputs[1], count: frames)
        }
    }
}
