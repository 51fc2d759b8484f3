import Testing
import Engine

/// Blocks in flight: a renderer whose instrument completes each block late
/// (as the offline pool does, on threads of its own) dispatches blocks ahead
/// of the one it mixes, each into buffers of its own, and sounds exactly as
/// one that renders block by block.
@Suite struct RendererBlocksInFlightTests {
    /// `FakeInstrument`'s sound, written into the renderer's buffers only when
    /// the block is collected: a slot reused too early, a block mixed before it
    /// is complete or in the wrong order shows in the output.
    final class LateInstrument: Instrument {
        let inner = FakeInstrument()
        let blocksInFlight: Int
        var stripCount: Int { inner.stripCount }
        var effectsGroupCount: Int { inner.effectsGroupCount }
        /// Per piece: where it goes (dry then effects pointers) and what it holds.
        private typealias Piece = (targets: [UnsafeMutablePointer<Float>?], sound: [[Float]])
        private var recording: [Piece] = []
        private var handedOver: [[Piece]] = []
        private(set) var collected = 0

        init(blocksInFlight: Int) { self.blocksInFlight = blocksInFlight }

        func prepare(sampleRate: Double, maxFrames: Int) { inner.prepare(sampleRate: sampleRate, maxFrames: maxFrames) }
        func receive(_ message: ChannelMessage) { inner.receive(message) }
        func silence() { inner.silence() }

        func render(frames: Int, dry: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>,
                    effects: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>) {
            let dryCount = 2 * stripCount, effectCount = 4 * effectsGroupCount
            // Render into scratch now (the instrument's state at this frame), deliver later.
            let scratch = (0..<(dryCount + effectCount)).map { _ in
                let p = UnsafeMutablePointer<Float>.allocate(capacity: frames)
                p.initialize(repeating: 0, count: frames)
                return Optional(p)
            }
            var pointers = scratch
            pointers.withUnsafeMutableBufferPointer { p in
                inner.render(frames: frames, dry: p.baseAddress!, effects: p.baseAddress! + dryCount)
            }
            let sound = scratch.map { Array(UnsafeBufferPointer(start: $0!, count: frames)) }
            for p in scratch { p!.deallocate() }
            let targets = (0..<(dryCount + effectCount)).map { j in j < dryCount ? dry[j] : effects[j - dryCount] }
            recording.append((targets, sound))
        }

        func finishBlock() {
            handedOver.append(recording)
            recording = []
        }

        func collectBlock() {
            let block = handedOver.removeFirst()
            for piece in block {
                for (j, target) in piece.targets.enumerated() {
                    guard let target else { continue }
                    for i in piece.sound[j].indices { target[i] += piece.sound[j][i] }
                }
            }
            collected += 1
        }
    }

    /// Notes on three channels, one of them played by the oscillator, and a
    /// track: every kind of slot buffer carries sound.
    static func score() -> Score {
        var events: [Score.Event] = []
        for i in 0..<40 {
            let t = 0.003 + Double(i) * 0.0137
            events.append(.init(seconds: t, message: .noteOn(UInt8(40 + i), velocity: UInt8(20 + 2 * i), channel: i % 3)))
            events.append(.init(seconds: t + 0.009, message: .noteOff(UInt8(40 + i), channel: i % 3)))
        }
        return Score(events: events, duration: 0.6)
    }

    static func render(_ instrument: any Instrument, ahead: Int, block: Int = 256) -> [Float] {
        let renderer = Renderer(instrument: instrument, tracks: [ConstantTrack(name: "t", left: 0.01, right: 0.02)])
        renderer.route(channel: 2, to: .oscillator)
        renderer.prepare(sampleRate: 48_000, maxFrames: block)
        renderer.schedule(score())
        #expect(renderer.blocksInFlight == instrument.blocksInFlight)
        var out: [Float] = []
        let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: 2 * block)
        defer { buffer.deallocate() }
        var dispatched = 0
        let blocks = 48_000 * 7 / 10 / block
        while dispatched < blocks || renderer.pendingBlocks > 0 {
            if dispatched < blocks && renderer.pendingBlocks <= ahead {
                renderer.dispatch(frames: block)
                dispatched += 1
            } else {
                let frames = renderer.collect(into: buffer)
                out.append(contentsOf: buffer.prefix(2 * frames))
            }
        }
        return out
    }

    @Test(arguments: [1, 3])
    func blocksDispatchedAhead_soundAsBlockByBlock(ahead: Int) {
        let reference = Self.render(FakeInstrument(), ahead: 0)
        let late = LateInstrument(blocksInFlight: ahead)
        let output = Self.render(late, ahead: ahead)
        #expect(late.collected == 48_000 * 7 / 10 / 256)
        #expect(reference.contains { $0 > 0.1 })
        #expect(output == reference)
    }

    @Test func discardPending_collectsUnmixed() {
        let late = LateInstrument(blocksInFlight: 2)
        let renderer = Renderer(instrument: late)
        renderer.prepare(sampleRate: 48_000, maxFrames: 256)
        renderer.schedule(Self.score())
        for _ in 0..<3 { renderer.dispatch(frames: 256) }
        #expect(renderer.pendingBlocks == 3)
        renderer.discardPending()
        #expect(renderer.pendingBlocks == 0)
        #expect(late.collected == 3)
        #expect(renderer.peak == 0)
        #expect(renderer.sampleTime == 768)
    }
}
