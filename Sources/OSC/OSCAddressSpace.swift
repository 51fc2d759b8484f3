import Parameters

/// One OSC argument, as liblo read it.
public enum OSCValue: Equatable, Sendable {
    case int(Int64)
    case float(Double)
    case string(String)
    case bool(Bool)
    /// A type Carillon takes nowhere (blob, MIDI, timetag, nil, char …): its type letter.
    case other(Character)

    /// A number: `i`, `h`, `f`, `d`, `T`/`F`.
    var number: Double? {
        switch self {
        case .int(let v): Double(v)
        case .float(let v): v
        case .bool(let b): b ? 1 : 0
        case .string, .other: nil
        }
    }
}

/// What one OSC message asks of Carillon.
public enum OSCRequest: Equatable, Sendable {
    /// `/carillon/strip/3/gain f -6`: a parameter set, in its own unit.
    case set(ParameterAddress, Double)
    /// `/carillon/strip/3/gain` with no argument, or `/carillon/get s strip.3.gain`: answer the value.
    case get(ParameterAddress)
    /// `/carillon/control/NAME f v`: a mapped control moved, in its own unit.
    case control(String, Double)
    /// `/carillon/control/NAME` with no argument.
    case getControl(String)
    /// `/carillon/scene i 2` (the third scene of `scenes:`).
    case sceneIndex(Int)
    /// `/carillon/scene s verse`.
    case sceneName(String)
    /// `/carillon/scene` with no argument: the scene switched to last.
    case getScene
    /// `/carillon/scene/save s NAME`: what plays now saved as a scene in the mapping file.
    case saveScene(String)
    /// `/carillon/audio` with no argument: the output's state ("playing", or "no audio: REASON, retrying").
    case getAudio
    /// `/carillon/note i i i`: channel 1…16, key, velocity (0 = off).
    case note(channel: Int, key: Int, velocity: Int)
    /// `/carillon/transport/seek f seconds`: needs a piece (`play`).
    case seek(seconds: Double)
    /// `/carillon/subscribe`: feedback to the sender; `i PORT`: to that port of the sender's host
    /// (TouchOSC and Open Stage Control listen on another port than they send from).
    case subscribe(port: Int?)
    case unsubscribe(port: Int?)
    /// `/carillon/channel/3/preset s "Warm Pad"` or `i i 0 89`: channel 1…16 selects a preset.
    case preset(channel: Int, OSCPresetChoice)
}

/// A preset as `/carillon/channel/N/preset` names it.
public enum OSCPresetChoice: Equatable, Sendable {
    /// Its name in the channel's font (`carillon presets` lists them).
    case name(String)
    /// Bank (0…127 by bank select, 128 on channel 10) and program 0…127.
    case number(bank: Int, program: Int)
}

/// Why a message was not taken.
public enum OSCRefusal: Error, Equatable, Sendable {
    case unknownPath(String)
    /// The path and arguments fit; what they name is not there (a preset's name the font lacks).
    case notFound(String)
    /// The path exists; the arguments do not fit (`expected` is what would).
    case wrongArguments(path: String, types: String, expected: String)

    var isWrongArguments: Bool { if case .wrongArguments = self { true } else { false } }

    public var description: String {
        switch self {
        case .unknownPath(let p): "unknown path \(p)"
        case .notFound(let what): what
        case .wrongArguments(let p, let t, let e): "\(p) ,\(t): takes \(e)"
        }
    }
}

/// The OSC address space: every parameter's dotted name with slashes under
/// `/carillon` (`strip.3.gain` is `/carillon/strip/3/gain`), the mapped
/// controls by name, the transport, scenes, notes, queries and subscriptions.
/// Pure: no socket, no hub (`OSCServer` applies what this returns).
public enum OSCAddressSpace {
    public static let root = "/carillon"

    /// `/carillon/strip/3/gain` for `strip.3.gain`.
    public static func path(of address: ParameterAddress) -> String {
        root + "/" + address.description.split(separator: ".", omittingEmptySubsequences: false).joined(separator: "/")
    }

    /// `/carillon/control/NAME`.
    public static func path(ofControl name: String) -> String { root + "/control/" + name }

    /// The request a message makes, or why it is refused.
    public static func request(path: String, types: String, arguments: [OSCValue]) -> Result<OSCRequest, OSCRefusal> {
        guard path.hasPrefix(root + "/") else { return .failure(.unknownPath(path)) }
        let rest = String(path.dropFirst(root.count + 1))
        func wrong(_ expected: String) -> Result<OSCRequest, OSCRefusal> {
            .failure(.wrongArguments(path: path, types: types, expected: expected))
        }
        let one = arguments.count == 1 ? arguments[0] : nil
        switch rest {
        case "subscribe", "unsubscribe":
            var port: Int?
            if !arguments.isEmpty {
                guard let n = one?.number, n == n.rounded(), (1...65535).contains(n) else {
                    return wrong("no argument (feedback to the sender) or one integer: the port to send it to")
                }
                port = Int(n)
            }
            return .success(rest == "subscribe" ? .subscribe(port: port) : .unsubscribe(port: port))
        case "get":
            guard case .string(let name)? = one else { return wrong("one string: a parameter's name (strip.3.gain)") }
            guard let address = ParameterAddress(name) else { return .failure(.unknownPath("parameter \(name)")) }
            return .success(.get(address))
        case "scene":
            switch one {
            case nil where arguments.isEmpty: return .success(.getScene)
            case .string(let name)?: return .success(.sceneName(name))
            case let v? where v.number != nil:
                guard let n = v.number, n == n.rounded(), n >= 0, n < 128 else { return wrong("a scene's place 0…127 or its name") }
                return .success(.sceneIndex(Int(n)))
            default: return wrong("a scene's place (i) or its name (s)")
            }
        case "scene/save":
            guard case .string(let name)? = one, !name.allSatisfy({ $0 == " " }) else {
                return wrong("one string: the scene's name (a scene of that name is replaced)")
            }
            return .success(.saveScene(name))
        case "note":
            let n = arguments.compactMap(\.number)
            guard arguments.count == 3, n.count == 3, n.allSatisfy({ $0 == $0.rounded() }),
                  (1...16).contains(n[0]), (0...127).contains(n[1]), (0...127).contains(n[2])
            else { return wrong("three integers: channel 1…16, key 0…127, velocity 0…127 (0 = off)") }
            return .success(.note(channel: Int(n[0]), key: Int(n[1]), velocity: Int(n[2])))
        case _ where rest.hasPrefix("channel/") && rest.hasSuffix("/preset"):
            let number = rest.dropFirst("channel/".count).dropLast("/preset".count)
            guard let channel = Int(number), (1...16).contains(channel) else { return .failure(.unknownPath(path)) }
            let expected = "a preset's name (s) or its bank and program (i i: bank 0…127, or 128 on channel 10; program 0…127)"
            if case .string(let name)? = one {
                guard !name.isEmpty else { return wrong(expected) }
                return .success(.preset(channel: channel, .name(name)))
            }
            let n = arguments.compactMap(\.number)
            guard arguments.count == 2, n.count == 2, n.allSatisfy({ $0 == $0.rounded() }),
                  (0...127).contains(n[0]) || (n[0] == 128 && channel == 10), (0...127).contains(n[1])
            else { return wrong(expected) }
            return .success(.preset(channel: channel, .number(bank: Int(n[0]), program: Int(n[1]))))
        case "audio":
            guard arguments.isEmpty else { return wrong("no argument: it answers the output's state") }
            return .success(.getAudio)
        case "transport/seek":
            guard let s = one?.number, s.isFinite, s >= 0 else { return wrong("one number: seconds from the piece's start") }
            return .success(.seek(seconds: s))
        default: break
        }
        if rest.hasPrefix("control/") {
            let name = String(rest.dropFirst("control/".count))
            guard !name.isEmpty else { return .failure(.unknownPath(path)) }
            if arguments.isEmpty { return .success(.getControl(name)) }
            guard let v = one?.number, v.isFinite else { return wrong("one number: the control's value in its unit") }
            return .success(.control(name, v))
        }
        guard !rest.contains("."), let address = ParameterAddress(rest.replacing("/", with: ".")) else {
            return .failure(.unknownPath(path))
        }
        if arguments.isEmpty {
            // A trigger (transport/play, transport/stop) fires with no argument; anything else answers.
            return address.spec.kind == .trigger ? .success(.set(address, 1)) : .success(.get(address))
        }
        guard let v = one?.number, v.isFinite else { return wrong("one number (i, f, d, T or F) in the parameter's unit") }
        return .success(.set(address, v))
    }
}
