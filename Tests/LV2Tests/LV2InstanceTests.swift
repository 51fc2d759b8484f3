import Foundation
import LV2
import Testing

/// Plugins running in Carillon's host: mda-lv2's instruments and effects
/// against the notes asked for and against lilv's own `lv2apply`.
@Suite struct LV2InstanceTests {
    static let mda = LV2WorldTests.mda
    static let rate = 48_000.0

    /// The pitch of `x` by autocorrelation between 100 and 2000 Hz (parabolic peak).
    static func pitch(_ x: [Float], rate: Double) -> Double {
        let minLag = Int(rate / 2000), maxLag = Int(rate / 100)
        var best = 0, bestValue = -Double.infinity
        var r = [Double](repeating: 0, count: maxLag + 2)
        for lag in minLag...maxLag + 1 {
            var sum = 0.0
            for i in 0..<(x.count - maxLag - 2) { sum += Double(x[i]) * Double(x[i + lag]) }
            r[lag] = sum
        }
        for lag in minLag + 1...maxLag where r[lag] > r[lag - 1] && r[lag] >= r[lag + 1] && r[lag] > bestValue {
            bestValue = r[lag]; best = lag
            if r[lag] > 0.8 * r[minLag...maxLag].max()! { break }  // the first strong peak: the period, not a multiple
        }
        guard best > 0 else { return 0 }
        let (a, b, c) = (r[best - 1], r[best], r[best + 1])
        let shift = (a - c) / (2 * (a - 2 * b + c))
        return rate / (Double(best) + shift)
    }

    @Test func piano_soundsFromTheNoteOnsFrame_andStopsAfterItsNoteOff() throws {
        let world = try LV2World()
        let piano = try LV2Instance(world: world, uri: Self.mda + "Piano", sampleRate: Self.rate, maxFrames: 512, urids: URIDMap())
        piano.activate()
        #expect(piano.takesMIDI && piano.audioOutputs.count == 2)
        piano.appendMIDI(frame: 300, status: 0x90, 69, 100, count: 3)
        piano.run(frames: 512)
        let first = Array(UnsafeBufferPointer(start: piano.audioOutputs[0], count: 512))
        #expect(first[..<300].allSatisfy { $0 == 0 }, "sound before the note-on's frame")
        #expect(first[300..<364].contains { abs($0) > 1e-4 }, "no sound within 64 frames of the note-on")
        var held: Float = 0
        for _ in 0..<20 {
            piano.run(frames: 512)
            for i in 0..<512 { held = max(held, abs(piano.audioOutputs[0][i])) }
        }
        piano.appendMIDI(frame: 0, status: 0x80, 69, 0, count: 3)
        for _ in 0..<40 { piano.run(frames: 512) }
        var tail: Float = 0
        for i in 0..<512 { tail = max(tail, abs(piano.audioOutputs[0][i])) }
        #expect(tail < held / 100, "after the note-off: \(tail) against \(held) held")
    }

    /// The world given is dropped at once: the instance keeps what it needs.
    @Test(arguments: [57, 69, 81])
    func ePiano_playsThePitchAsked(_ note: Int) throws {
        let ePiano = try LV2Instance(world: try LV2World(), uri: Self.mda + "EPiano", sampleRate: Self.rate, maxFrames: 512,
                                     urids: URIDMap())
        ePiano.activate()
        ePiano.appendMIDI(frame: 0, status: 0x90, UInt8(note), 100, count: 3)
        var left: [Float] = []
        for _ in 0..<30 {
            ePiano.run(frames: 512)
            left += UnsafeBufferPointer(start: ePiano.audioOutputs[0], count: 512)
        }
        let expected = 440 * pow(2, Double(note - 69) / 12)
        let hz = Self.pitch(Array(left[4800..<14400]), rate: Self.rate)
        #expect(abs(hz / expected - 1) < 0.003, "note \(note) sounded at \(hz) Hz, not \(expected)")
    }

    // MARK: Against lv2apply

    /// A 32-bit float WAV of planar `channels`.
    static func writeWAV(_ channels: [[Float]], to path: String) throws {
        let frames = channels[0].count, n = channels.count
        var d = Data()
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { d.append(contentsOf: $0) } }
        func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { d.append(contentsOf: $0) } }
        d.append(contentsOf: Array("RIFF".utf8)); u32(UInt32(36 + 4 * n * frames)); d.append(contentsOf: Array("WAVE".utf8))
        d.append(contentsOf: Array("fmt ".utf8)); u32(16); u16(3); u16(UInt16(n)); u32(UInt32(rate)); u32(UInt32(4 * n * Int(rate)))
        u16(UInt16(4 * n)); u16(32)
        d.append(contentsOf: Array("data".utf8)); u32(UInt32(4 * n * frames))
        for i in 0..<frames { for c in 0..<n { withUnsafeBytes(of: channels[c][i].bitPattern.littleEndian) { d.append(contentsOf: $0) } } }
        try d.write(to: URL(fileURLWithPath: path))
    }

    /// The float samples of a WAV file lv2apply wrote (the input's format), planar.
    static func readWAV(_ path: String, channels n: Int) throws -> [[Float]] {
        let d = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        func u32(_ at: Int) -> Int { Int(d[at]) | Int(d[at + 1]) << 8 | Int(d[at + 2]) << 16 | Int(d[at + 3]) << 24 }
        var at = 12
        while at + 8 <= d.count, String(decoding: d[at..<at + 4], as: UTF8.self) != "data" { at += 8 + u32(at + 4) }
        let count = u32(at + 4) / 4, base = at + 8
        var out = [[Float]](repeating: [], count: n)
        for k in 0..<count { out[k % n].append(Float(bitPattern: UInt32(u32(base + 4 * k)))) }
        return out
    }

    /// `effect` run by Carillon in blocks of 512 against `lv2apply` on the same
    /// input, with the same controls: the largest difference in dB of full scale.
    static func differenceFromLv2apply(_ effect: String, controls: [String: Float]) throws -> Double {
        let dir = NSTemporaryDirectory() + "carillon-lv2apply-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // A second of decaying noise bursts and a sine: something for a delay, a filter or a drive to work on.
        var generator = SystemRandomNumberGenerator()
        let frames = Int(rate)
        let input: [[Float]] = (0..<2).map { c in
            (0..<frames).map { i in
                let burst = Float(exp(-Double(i % 12_000) / 800)) * Float.random(in: -0.5...0.5, using: &generator)
                return burst + 0.25 * Float(sin(2 * .pi * Double(220 + 110 * c) * Double(i) / rate))
            }
        }
        try writeWAV(input, to: dir + "/in.wav")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/lv2apply")
        process.arguments = ["-i", dir + "/in.wav", "-o", dir + "/out.wav"]
            + controls.sorted { $0.key < $1.key }.flatMap { ["-c", $0.key, String($0.value)] } + [effect]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let reference = try readWAV(dir + "/out.wav", channels: 2)

        let world = try LV2World()
        let plugin = try LV2Instance(world: world, uri: effect, sampleRate: rate, maxFrames: 512, urids: URIDMap())
        for (symbol, value) in controls {
            plugin.setControl(at: try #require(plugin.info.controls.firstIndex { $0.symbol == symbol }), to: value)
        }
        plugin.activate()
        var output = [[Float]](repeating: [], count: 2)
        var at = 0
        while at < frames {
            let n = min(512, frames - at)
            for c in 0..<2 { for i in 0..<n { plugin.audioInputs[c][i] = input[c][at + i] } }
            plugin.run(frames: n)
            for c in 0..<2 { output[c] += UnsafeBufferPointer(start: plugin.audioOutputs[c], count: n) }
            at += n
        }
        #expect(reference[0].count == frames && reference[1].count == frames)
        var worst: Float = 0
        for c in 0..<2 { for i in 0..<min(frames, reference[c].count) { worst = max(worst, abs(output[c][i] - reference[c][i])) } }
        let loudest = output.flatMap { $0 }.map(abs).max() ?? 0
        #expect(loudest > 0.01, "the effect put out silence")
        return worst > 0 ? 20 * log10(Double(worst)) : -.infinity
    }

    @Test(arguments: [("Delay", [:]), ("Delay", ["l_delay": 0.2, "feedback": 0.7]), ("Overdrive", ["drive": 0.8]),
                      ("Stereo", [:])] as [(String, [String: Float])])
    func effect_matchesLv2apply(_ name: String, _ controls: [String: Float]) throws {
        let dB = try Self.differenceFromLv2apply(Self.mda + name, controls: controls)
        print("mda \(name) \(controls): largest difference from lv2apply \(dB) dBFS")
        #expect(dB <= -90, "\(name) \(controls): \(dB) dB from lv2apply")
    }

    // MARK: Refusals

    @Test func aRequiredFeatureCarillonLacks_isRefusedByName() throws {
        let bundle = NSTemporaryDirectory() + "carillon-teleport-\(getpid()).lv2"
        try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: bundle) }
        try """
            @prefix lv2: <http://lv2plug.in/ns/lv2core#> .
            @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
            <urn:carillon:test:teleport> a lv2:Plugin ; lv2:binary <file:///usr/lib/lv2/mda.lv2/Piano.so> ; rdfs:seeAlso <plugin.ttl> .
            """.write(toFile: bundle + "/manifest.ttl", atomically: true, encoding: .utf8)
        try """
            @prefix doap: <http://usefulinc.com/ns/doap#> .
            @prefix lv2: <http://lv2plug.in/ns/lv2core#> .
            <urn:carillon:test:teleport> a lv2:Plugin ; doap:name "Teleport" ;
                lv2:requiredFeature <http://lv2plug.in/ns/ext/urid#map>, <http://example.org/ns#teleport> .
            """.write(toFile: bundle + "/plugin.ttl", atomically: true, encoding: .utf8)
        let world = try LV2World()
        try world.loadBundle(at: bundle)
        #expect {
            _ = try LV2Instance(world: world, uri: "urn:carillon:test:teleport", sampleRate: 48_000, maxFrames: 64, urids: URIDMap())
        } throws: { error in
            (error as? LV2Error)?.description
                == "urn:carillon:test:teleport requires the LV2 feature http://example.org/ns#teleport, which Carillon does not provide"
        }
    }
}
