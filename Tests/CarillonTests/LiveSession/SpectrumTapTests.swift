import Analysis
import ALSA
import CAllocationCounter
import LiveSession
import Foundation
import Synchronization
import Testing
import Threads

@Suite(.serialized) struct SpectrumTapTests {
    /// Pushes `seconds` of a sine at `hz` in 256-frame blocks from a thread of its own (the output thread's role).
    private func feed(_ tap: SpectrumTap, hz: Double, seconds: Double, rate: Int = 48_000) throws -> Int64 {
        let frames = 256
        let allocations = Mutex<Int64>(0)
        let thread = try JoinableThread(name: "test-output") {
            let block = UnsafeMutableBufferPointer<Float>.allocate(capacity: 2 * frames)
            defer { block.deallocate() }
            carillon_allocations_arm()
            var n = 0
            while n < Int(seconds * Double(rate)) {
                for k in 0..<frames {
                    let v = Float(0.25 * sin(2 * .pi * hz * Double(n + k) / Double(rate)))
                    block[2 * k] = v; block[2 * k + 1] = v
                }
                tap.push(UnsafeBufferPointer(block), frames: frames)
                n += frames
                usleep(2_000)   // about real time ×2.7: the analyser keeps up
            }
            let counted = carillon_allocations_disarm()
            allocations.withLock { $0 = counted }
        }
        thread.join()
        return allocations.withLock { $0 }
    }

    @Test(arguments: [100.0, 1_000.0, 5_000.0])
    func sine_peaksInItsThirdOctaveBand(hz: Double) throws {
        let tap = try SpectrumTap(sampleRate: 48_000)   // FFTW plans here, on the test's thread
        try tap.start()
        let allocations = try feed(tap, hz: hz, seconds: 0.6)
        usleep(150_000)
        tap.stop()
        #expect(allocations == 0)   // push: a copy into the ring
        #expect(tap.analysisCount > 0 && tap.droppedBlocks == 0)
        let levels = tap.levels
        let loudest = levels.indices.max { levels[$0] < levels[$1] }!
        let band = tap.bands[loudest]
        #expect(band.lower <= hz && hz < band.upper, "loudest band \(band.centre) Hz for \(hz) Hz")
        // A 0.25 sine (-12 dB) reads about -12 dB in its band; bands two away are far below.
        #expect(abs(levels[loudest] - (-12.04)) < 1.5, "level \(levels[loudest]) dB")
        for (i, level) in levels.enumerated() where abs(i - loudest) >= 3 { #expect(level < levels[loudest] - 40) }
    }

    @Test func bands_thirdOctavesUpToNyquist() throws {
        let analyzer = try SpectrumAnalyzer(sampleRate: 44_100)
        #expect(analyzer.bands.count == 30)
        #expect(abs(analyzer.bands.first!.centre - 24.8) < 0.1 && abs(analyzer.bands.last!.centre - 20_159) < 1)
        let silence = [Float](repeating: 0, count: analyzer.size)
        let levels = silence.withUnsafeBufferPointer { analyzer.analyze($0, elapsed: 0.05) }
        #expect(levels.allSatisfy { $0 == SpectrumAnalyzer.floor })
    }
}
