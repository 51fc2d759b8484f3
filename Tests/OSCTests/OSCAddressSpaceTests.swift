import OSC
import Parameters
import Testing

/// The address space, without a socket: every parameter's path, the other
/// paths, and the arguments each takes.
@Suite struct OSCAddressSpaceTests {
    typealias A = OSCAddressSpace

    @Test func everyParameter_hasAPath_thatSetsIt() {
        var failures: [String] = []
        for address in ParameterAddress.builtIn {
            let path = A.path(of: address)
            let v = address.spec.defaultValue
            if A.request(path: path, types: "f", arguments: [.float(v)]) != .success(.set(address, v)) { failures.append(path) }
        }
        #expect(failures.isEmpty, "\(failures.prefix(10))")
        #expect(ParameterAddress.builtIn.count > 2000)
    }

    @Test func audio_isAQuery_withoutArguments() {
        #expect(A.request(path: "/carillon/audio", types: "", arguments: []) == .success(.getAudio))
        guard case .failure(.wrongArguments) = A.request(path: "/carillon/audio", types: "i", arguments: [.int(1)]) else {
            Issue.record("an argument to /carillon/audio is refused"); return
        }
    }

    @Test func textForms_mapToSlashes() {
        #expect(A.path(of: .strip(.channel(2), .gain)) == "/carillon/strip/3/gain")
        #expect(A.path(of: .channelCC(0, 74)) == "/carillon/channel/1/cc/74")
        #expect(A.path(of: .strip(.oscillator, .gain)) == "/carillon/osc/level")
        #expect(A.path(of: .reverb(.roomSize)) == "/carillon/synth/reverb/room-size")
        #expect(A.path(of: .strip(.track(1), .pan)) == "/carillon/track/2/pan")
        #expect(A.request(path: "/carillon/strip/3/gain", types: "f", arguments: [.float(-6)]) == .success(.set(.strip(.channel(2), .gain), -6)))
        #expect(A.request(path: "/carillon/channel/1/cc/74", types: "i", arguments: [.int(100)]) == .success(.set(.channelCC(0, 74), 100)))
    }

    @Test func noArgument_isAQuery_butATriggerFires() {
        #expect(A.request(path: "/carillon/master/gain", types: "", arguments: []) == .success(.get(.masterGain)))
        #expect(A.request(path: "/carillon/get", types: "s", arguments: [.string("strip.3.gain")]) == .success(.get(.strip(.channel(2), .gain))))
        #expect(A.request(path: "/carillon/transport/play", types: "", arguments: []) == .success(.set(.transport(.play), 1)))
        #expect(A.request(path: "/carillon/transport/tempo", types: "f", arguments: [.float(90)]) == .success(.set(.transport(.tempo), 90)))
        #expect(A.request(path: "/carillon/transport/seek", types: "f", arguments: [.float(12.5)]) == .success(.seek(seconds: 12.5)))
    }

    @Test func controlsScenesNotesSubscriptions_parse() {
        #expect(A.request(path: "/carillon/control/Volume 1", types: "f", arguments: [.float(0.5)]) == .success(.control("Volume 1", 0.5)))
        #expect(A.request(path: "/carillon/control/Volume", types: "", arguments: []) == .success(.getControl("Volume")))
        #expect(A.request(path: "/carillon/scene", types: "i", arguments: [.int(2)]) == .success(.sceneIndex(2)))
        #expect(A.request(path: "/carillon/scene", types: "s", arguments: [.string("verse")]) == .success(.sceneName("verse")))
        #expect(A.request(path: "/carillon/note", types: "iii", arguments: [.int(10), .int(36), .int(0)])
                == .success(.note(channel: 10, key: 36, velocity: 0)))
        #expect(A.request(path: "/carillon/subscribe", types: "", arguments: []) == .success(.subscribe(port: nil)))
        #expect(A.request(path: "/carillon/subscribe", types: "i", arguments: [.int(9001)]) == .success(.subscribe(port: 9001)))
    }

    @Test func wrongArguments_andUnknownPaths_areRefused() {
        #expect(A.request(path: "/carillon/strip/3/gain", types: "s", arguments: [.string("loud")]).isWrongArguments)
        #expect(A.request(path: "/carillon/strip/3/gain", types: "ff", arguments: [.float(1), .float(2)]).isWrongArguments)
        #expect(A.request(path: "/carillon/note", types: "iii", arguments: [.int(17), .int(60), .int(100)]).isWrongArguments)
        #expect(A.request(path: "/carillon/note", types: "iii", arguments: [.int(1), .int(60), .int(200)]).isWrongArguments)
        #expect(A.request(path: "/carillon/strip/17/gain", types: "f", arguments: [.float(0)]) == .failure(.unknownPath("/carillon/strip/17/gain")))
        #expect(A.request(path: "/carillon/strip.3.gain", types: "f", arguments: [.float(0)]) == .failure(.unknownPath("/carillon/strip.3.gain")))
        #expect(A.request(path: "/other/strip/3/gain", types: "f", arguments: [.float(0)]) == .failure(.unknownPath("/other/strip/3/gain")))
        #expect(A.request(path: "/carillon/strip/3/gain", types: "f", arguments: [.float(.nan)]).isWrongArguments)
    }

    @Test func endpointsAndNetworks_parse_andAdmitOnlyTheirSources() throws {
        #expect(try OSCEndpoint.parse("9000") == OSCEndpoint(host: "127.0.0.1", port: 9000))
        #expect(try OSCEndpoint.parse("0.0.0.0:9000").isLoopback == false)
        #expect(throws: OSCError.badEndpoint("localhost:9000")) { try OSCEndpoint.parse("localhost:9000") }
        #expect(throws: OSCError.badEndpoint("70000")) { try OSCEndpoint.parse("70000") }
        #expect(throws: OSCError.badNetwork("10.0.0.0/33")) { try OSCNetwork.parse("10.0.0.0/33") }
        let lan = try OSCNetwork.parse("192.168.1.0/24")
        let config = OSCConfiguration(endpoint: try OSCEndpoint.parse("0.0.0.0:9000"), allowed: [lan])
        #expect(config.admits(0xC0A8_0105))   // 192.168.1.5
        #expect(!config.admits(0xC0A8_0205))  // 192.168.2.5
        #expect(config.admits(0x7F00_0001))   // 127.0.0.1
        #expect(throws: OSCError.needsAllowList("0.0.0.0")) { try OSCConfiguration(endpoint: try OSCEndpoint.parse("0.0.0.0:9000")).validate() }
    }
}

extension Result where Success == OSCRequest, Failure == OSCRefusal {
    var isWrongArguments: Bool { if case .failure(.wrongArguments) = self { true } else { false } }
}
