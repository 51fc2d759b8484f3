import ControlDefinitions
import Controls
import Foundation
import MIDI
import MappingFiles
import Parameters

/// The JSON messages on `/ws`, version 1. Every message is one text frame
/// holding one JSON object with a `type`.
///
/// Server → page:
/// - `{"type":"hello","version":1,"mapping":"…","play":false,"controls":[C…],"groups":[G…],"parameters":[P…]}`
///   on connect and again whenever the hub's set of controls changes. C = `{"name","kind","value","position","min","max","unit","display","pickup","steps","pad","part"}`
///   (`steps`: selectors only; `pad`, `part`: an xy pad's name and `x`, `y` or `touch`, its parts drawn as one square); G = `{"name","controls":[name…],"strip":"3","transport":false}` in page order
///   (`strip`: the `stripKeys` entry whose meter goes beside the group's fader);
///   P = the `transport.*` and `master.gain` specs `{"address","min","max","unit"}`.
///   The rig rides in it too: `"scenes":["Split","Piano only"],"scene":0,"zones":[Z…]` (`scene`
///   absent when none is current; `zones` those in force). Z = `{"name","low","high","keys","row",
///   "to":[{"channel":2},{"port":"Hardware Synth","channel":1}],"transpose","velocity","velocities","takes","short","spoken"}`:
///   keys 0…127 (`keys` as note names, C4 = 60), `row` the zone's row in the strip (layers
///   stack), `velocity` the shape in short (`×0.6+10`, `=100`, `s-curve 2`), `velocities`
///   `"1..63"`; `takes` (`vel 1..63 in ch 2`: what else it matches), `short` (what it does:
///   `ch 2 +12`) and `spoken` (for screen readers) put it in words.
/// - `{"type":"scene","scenes":[…],"scene":1,"zones":[Z…]}` when the scene switches (a
///   program change, the page's scene buttons or scene control, `live`'s `s` key), at the
///   next update tick; a reload sends a new hello instead.
/// - The channel strips ride in the hello too (when the host gave the surface its fonts):
///   `"fonts":[{"name":"FluidR3_GM.sf2","path":"…","presets":[{"bank":0,"program":0,"name":"Yamaha Grand Piano"}…]}]`,
///   `"sounds":[S…]` with S = `{"channel":1,"bank":0,"program":0,"name":"Yamaha Grand Piano","font":0}` (`name`
///   absent when the font lacks the preset, `font` when the channel's font was not found: `soundsProblem` says why).
/// - `{"type":"sounds","channels":[S…]}` when a channel's preset changes (the page's picker, OSC, a scene, a control).
/// - `{"type":"controls","controls":[C…]}` what changed (coalesced: at most one per
///   control every ~20 ms), same fields as in hello minus the static ones.
/// - `{"type":"status","load":0.12,"xruns":0,"blocks":123,"voices":12,"peak":0.5,"rms":0.1,"strips":[p…],"stripNames":[n…],"stripKeys":[k…],
///   "spectrum":[dB…30],"overflows":0,"refused":0,"sync":"following … at 120.0 BPM","audio":"no audio: …, retrying","transport":{"position":s,"duration":s,"playing":b,"looping":b,"bpm":x}}`
///   about every 100 ms (`transport` for `play` only; numbers absent without audio).
/// - `{"type":"refused","reason":"unknown-control"}` answer to a refused message (not to floods).
/// - `{"type":"pong"}` answer to `{"type":"ping"}`.
///
/// Page → server:
/// - `{"type":"control","name":"Fader 1","position":0.5}` moves a control as its
///   hardware would (0…1 of its travel: the mapping's curve and steps apply);
/// - `{"type":"control","name":"Fader 1","value":-6}` sets it to a value in its own range and unit;
/// - `{"type":"set","parameter":"transport.position","value":50}` sets a parameter
///   (its own unit and range: `transport.play`, `.stop`, `.loop`, `.tempo`, `.position`, `master.gain` …;
///   the page's scene buttons send `scene.select` with the scene's place in `scenes`);
/// - `{"type":"preset","channel":3,"bank":0,"program":89}` selects a preset on channel 1…16
///   (bank 0…127, or 128 on channel 10) as `/carillon/channel/N/preset i i` does: bank select then program change;
/// - `{"type":"save-scene","name":"Verse"}` saves what plays now (each channel strip's preset, the
///   parameter values, the current scene's own zones) as a scene in the mapping file, replacing one of that
///   name; answered `{"type":"saved","scene":"Verse"}` (the reload's hello follows) or
///   `{"type":"refused","reason":"save-failed","message":"…"}`;
/// - `{"type":"ping"}`.
///
/// Refused (counted by reason, answered with `refused`, never applied): not JSON,
/// not an object of a known type, longer than the limit (4 KiB), binary frames,
/// an unknown control or parameter, a readout, a value outside the range or not
/// finite, both or neither of `position`/`value`, more than the rate limit.
public enum WebProtocol {
    public static let version = 1

    public enum Refusal: String, CaseIterable, Sendable, Error {
        case malformed, oversized, binary, flood
        case unknownControl = "unknown-control"
        case unknownParameter = "unknown-parameter"
        case readOnly = "read-only"
        case outOfRange = "out-of-range"
        /// A scene the host could not save (no mapping file, a file it cannot patch or write): the answer says why.
        case saveFailed = "save-failed"
    }

    /// A validated request from a page.
    public enum Request: Equatable, Sendable {
        case control(name: String, value: Double)
        case parameter(ParameterAddress, value: Double)
        /// A channel strip's picker: bank (0…127, or 128 on channel 10) and program, as OSC's `/carillon/channel/N/preset i i`.
        case preset(channel: Channel, bank: Int, program: UInt7)
        /// "Save as scene": what plays now, as scene `name` in the mapping file.
        case saveScene(name: String)
        case ping
    }

    struct Incoming: Decodable {
        var type: String
        var name: String?
        var parameter: String?
        var value: Double?
        var position: Double?
        var channel: Int?
        var bank: Int?
        var program: Int?
    }

    /// Validates one text message against the controls; position is converted
    /// through the control's curve (the hardware's path) into a value.
    static func parse(_ text: String, maxBytes: Int, controls: ControlIndex) -> Result<Request, Refusal> {
        guard text.utf8.count <= maxBytes else { return .failure(.oversized) }
        guard let m = try? JSONDecoder().decode(Incoming.self, from: Data(text.utf8)) else { return .failure(.malformed) }
        switch m.type {
        case "ping":
            return .success(.ping)
        case "control":
            guard let name = m.name else { return .failure(.malformed) }
            guard let control = controls.byName[name] else { return .failure(.unknownControl) }
            guard control.kind != .readout else { return .failure(.readOnly) }
            switch (m.value, m.position) {
            case (let v?, nil):
                guard v.isFinite, v >= control.range.lower, v <= control.range.upper else { return .failure(.outOfRange) }
                return .success(.control(name: name, value: v))
            case (nil, let p?):
                guard p.isFinite, (0...1).contains(p) else { return .failure(.outOfRange) }
                return .success(.control(name: name, value: control.value(atPosition: p)))
            default:
                return .failure(.malformed)
            }
        case "set":
            guard let text = m.parameter, let v = m.value else { return .failure(.malformed) }
            guard let address = ParameterAddress(text) else { return .failure(.unknownParameter) }
            guard v.isFinite, address.spec.range.contains(v) else { return .failure(.outOfRange) }
            return .success(.parameter(address, value: v))
        case "preset":
            guard let channel = m.channel, let bank = m.bank, let program = m.program else { return .failure(.malformed) }
            guard (1...16).contains(channel), (0...127).contains(program),
                  (0...127).contains(bank) || (bank == 128 && channel == 10) else { return .failure(.outOfRange) }
            return .success(.preset(channel: Channel(UInt8(channel - 1)), bank: bank, program: UInt7(UInt8(program))))
        case "save-scene":
            guard let name = m.name, !name.trimmingCharacters(in: .whitespaces).isEmpty, name.count <= 100 else {
                return .failure(.malformed)
            }
            return .success(.saveScene(name: name))
        default:
            return .failure(.malformed)
        }
    }
}

/// The mapping's controls by name, with what turns a widget's position into a value.
struct ControlIndex: Sendable {
    struct Entry: Sendable {
        var index: Int
        var kind: ControlKind
        var range: ValueRange
        var shaping: Shaping

        /// The hardware's path: position → curve (and steps) → the control's range.
        /// Switches take the position as pressed (≥ 0.5) or not.
        func value(atPosition p: Double) -> Double {
            switch kind {
            case .toggle, .button, .momentary: range.scale(p >= 0.5 ? 1 : 0)
            case .pad: range.scale(p)
            default: range.scale(shaping.apply(p))
            }
        }
    }
    var byName: [String: Entry] = [:]

    init(states: [ControlState], definitions: [ControlDefinition]) {
        let shapings = Dictionary(definitions.map { ($0.name, $0.shaping) }, uniquingKeysWith: { a, _ in a })
        for (i, s) in states.enumerated() {
            byName[s.name] = Entry(index: i, kind: s.kind, range: s.range, shaping: shapings[s.name] ?? .linear)
        }
    }
}

/// What the page is sent: encoded with JSONEncoder (names and units escaped properly).
struct ControlMessage: Encodable, Equatable {
    var name: String
    var kind: String?
    var value: Double
    var position: Double
    var min: Double?
    var max: Double?
    var unit: String?
    var display: String
    var pickup: Bool
    var steps: Int?
    /// An xy pad's part: the pad's name, and `x`, `y` or `touch`.
    var pad: String?
    var part: String?

    init(_ s: ControlState, full: Bool, steps: Int? = nil, pad: PadPart? = nil) {
        name = s.name
        value = s.value.isFinite ? s.value : 0
        position = s.position.isFinite ? s.position : 0
        display = s.display
        pickup = s.awaitingPickup
        if full {
            kind = s.kind.rawValue
            min = s.range.from
            max = s.range.to
            unit = s.unit.rawValue
            self.steps = steps
            self.pad = pad?.name
            part = pad?.part.rawValue
        }
    }
}

struct ParameterMessage: Encodable {
    var address: String
    var min: Double
    var max: Double
    var unit: String
}

struct HelloMessage: Encodable {
    var type = "hello"
    var version = WebProtocol.version
    var mapping: String?
    var play: Bool
    var controls: [ControlMessage]
    var groups: [GroupMessage]
    var parameters: [ParameterMessage]
    var scenes: [String]
    var scene: Int?
    var zones: [ZoneMessage]
    /// The channel strips (absent without a font lookup): the fonts, what each channel plays, why a font is missing.
    var fonts: [FontMessage]?
    var sounds: [ChannelSoundMessage]?
    var soundsProblem: String?
}

/// One zone of the current scene, as the page's keyboard strip draws it.
struct ZoneMessage: Encodable, Equatable {
    struct Destination: Encodable, Equatable {
        var port: String?
        var channel: Int
    }
    var name: String
    var low: Int
    var high: Int
    var keys: String
    var row: Int
    var to: [Destination]
    var transpose: Int
    var velocity: String?
    var velocities: String?
    /// What it takes besides its keys (`vel 1..63 in ch 2`); absent for most zones.
    var takes: String?
    var short: String
    var spoken: String

    init(_ z: ZoneSummary) {
        name = z.name
        low = z.low
        high = z.high
        keys = z.keys
        row = z.row
        to = z.destinations.map { Destination(port: $0.port, channel: $0.channel) }
        transpose = z.transpose
        velocity = z.velocity
        velocities = z.velocities.map { "\($0.lowerBound)..\($0.upperBound)" }
        takes = z.takes.isEmpty ? nil : z.takes
        short = z.short
        spoken = z.spoken
    }
}

/// The scene switched to, and the zones now in force.
struct SceneMessage: Encodable {
    var type = "scene"
    var scenes: [String]
    var scene: Int?
    var zones: [ZoneMessage]

    init(_ rig: RigView) {
        scenes = rig.sceneNames
        scene = rig.state.scene
        zones = rig.zones.map(ZoneMessage.init)
    }
}

/// One group of controls on the page, in order: its controls top to bottom,
/// the strip whose meter stands beside its fader, whether it goes in the transport's bar.
struct GroupMessage: Encodable {
    var name: String
    var controls: [String]
    var strip: String?
    var transport: Bool

    init(_ g: ControlGroup) {
        name = g.name
        controls = g.controls
        strip = g.strip?.key
        transport = g.isTransport
    }
}

struct ControlsMessage: Encodable {
    var type = "controls"
    var controls: [ControlMessage]
}

/// The transport of `carillon play`, as the page shows it.
public struct TransportSnapshot: Sendable, Encodable, Equatable {
    public var position: Double
    public var duration: Double
    public var playing: Bool
    public var looping: Bool
    public var bpm: Double
    public init(position: Double, duration: Double, playing: Bool, looping: Bool, bpm: Double) {
        self.position = position; self.duration = duration; self.playing = playing; self.looping = looping; self.bpm = bpm
    }
}

struct StatusMessage: Encodable {
    var type = "status"
    var load: Double?
    var xruns: Int?
    var blocks: Int?
    var voices: Int?
    var peak: Double?
    /// Each MIDI channel strip's last block peak (linear).
    var strips: [Double]?
    /// The strips' names (`1`…`16`, `osc`, `tone`, …), as `strips` orders them.
    var stripNames: [String]?
    /// The strips' keys (`1`…`16`, `osc`, `tone`, `reverb`, `chorus`, `track1`…), as a group's `strip` names one.
    var stripKeys: [String]?
    var rms: Double?
    /// The master's spectrum: dB per third-octave band, 25 Hz … 20 kHz.
    var spectrum: [Double]?
    var overflows: Int?
    var refused: Int?
    /// "following 24:0 'Digitakt' at 120.0 BPM" (`--sync`), "leading the JACK transport at 80.0 BPM"; absent otherwise.
    var sync: String?
    /// "no audio: REASON, retrying" while the output is gone; absent while it plays.
    var audio: String?
    var transport: TransportSnapshot?
}

struct RefusedMessage: Encodable {
    var type = "refused"
    var reason: String
    /// Why, in words (a failed save).
    var message: String?
}

struct SavedMessage: Encodable {
    var type = "saved"
    var scene: String
}

enum JSON {
    static func encode(_ value: some Encodable) -> String {
        // Our own types with finite numbers: encoding cannot fail.
        (try? String(decoding: JSONEncoder().encode(value), as: UTF8.self)) ?? "{}"
    }
}
