import AudioCompare
import Testing
import Sampling
import Hosting
import Engine
import FluidSynth

/// A seek into the middle of a real piece, through FluidSynth: what follows
/// sounds like the piece from that point (chased programs and controllers),
/// compared by 10 ms envelopes with a render from the start.
@Suite struct LivePlaySeekTests {
    static let rate = 22_050.0

    func render(_ path: String, seekTo seconds: Double?, frames: Int) throws -> [Float] {
        let synth = try Synth(settings: Settings.forRendering(sampleRate: Self.rate, gain: 0.5))
        try synth.setReverb(on: false)
        try synth.setChorus(on: false)
        let font = try synth.loadSoundFont(at: timGM)
        defer { withExtendedLifetime(font) {} }
        let renderer = Renderer(instrument: FluidSynthInstrument(synth: synth))
        renderer.prepare(sampleRate: Self.rate, maxFrames: 512)
        renderer.schedule(try Piece(contentsOf: path).score, startingAt: 0)
        if let seconds { renderer.transport.seek(to: seconds) }
        var out = [Float](repeating: 0, count: frames)
        var block = [Float](repeating: 0, count: 1_024)
        var done = 0
        while done < frames {
            block.withUnsafeMutableBufferPointer { renderer.render(frames: 512, into: $0) }
            for i in 0..<min(512, frames - done) { out[done + i] = block[2 * i] }
            done += 512
        }
        return out
    }

    func envelope(_ x: ArraySlice<Float>) -> [Double] {
        let w = Int(Self.rate) / 100
        return stride(from: x.startIndex, to: x.endIndex - w, by: w).map { s in
            (x[s..<s + w].reduce(0.0) { $0 + Double($1) * Double($1) } / Double(w)).squareRoot()
        }
    }

    func correlation(_ a: [Double], _ b: [Double]) -> Double {
        let n = Double(min(a.count, b.count))
        let a = a.prefix(Int(n)), b = b.prefix(Int(n))
        let ma = a.reduce(0, +) / n, mb = b.reduce(0, +) / n
        var sab = 0.0, saa = 0.0, sbb = 0.0
        for (x, y) in zip(a, b) { sab += (x - ma) * (y - mb); saa += (x - ma) * (x - ma); sbb += (y - mb) * (y - mb) }
        return sab / (saa * sbb).squareRoot()
    }

    @Test(arguments: ["train_filled_with_cash.mid", "coconut_run2.mid"])
    func seekIntoTheMiddle_soundsLikeThePieceFromThere(_ name: String) throws {
        let path = "\(openmsx)/\(name)"
        let at = 20.0, length = Int(10 * Self.rate), offset = Int(at * Self.rate)
        let whole = try render(path, seekTo: nil, frames: offset + length)
        let sought = try render(path, seekTo: at, frames: length)
        // Skip the first second: notes held across the seek point are not restarted.
        let skip = Int(Self.rate)
        let c = correlation(envelope(sought[skip..<length]), envelope(whole[(offset + skip)..<(offset + length)]))
        print("seek to \(at) s in \(name): envelope correlation \(c)")
        #expect(c > 0.9)
    }
}
