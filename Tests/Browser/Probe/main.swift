import Controls
import Engine
import Foundation
import Hosting
import MIDI
import MappingFiles
import Parameters
import Sampling
import WebSurface

// Driver of the browser tests (Tests/Browser/web_surface_test.py); not shipped.
// Serves a WebSurface over a ControlHub loaded from a mapping, on loopback,
// with the hub connected to an engine as a host's is (`HostAssembly.connect`:
// `ParameterRouting` into a `Renderer`'s queue; the keyboard's way in through
// `KeyboardRouting`; a render thread of its own, every 5 ms a block, into an
// instrument that keeps what it receives; the sampler's presets told to the hub
// by a `ChannelSelectionsFollower`, as the live control loop does) and, given a
// SoundFont, the channel strips' presets (`PresetCatalog`, as the CLI's lookup);
// prints `listening PORT`, then answers one command per stdin line:
//   cc CHANNEL(1-16) CONTROLLER VALUE   → the hub receives it, as from a controller; prints `ok`
//   pc CHANNEL(1-16) PROGRAM            → a program change, likewise (a scene selector's); prints `ok`
//   key HEX…                            → one message from the keyboard (`B0 00 08`, `C0 05`), the
//                                         keyboard's way in (controls, zones, the queue); prints `ok`
//   scene                               → prints the current scene's name (`-` for none)
//   value PARAMETER                     → prints the hub's value of the parameter
//   states                              → prints `name<TAB>value<TAB>display` per control, then `end`
//   preset CHANNEL(1-16) BANK PROGRAM   → selects a preset (ControlHub.selectPreset); prints `ok`
//   save NAME…                          → saves what plays as a scene in the mapping file; prints `ok` or `error …`
//   save-loop NAME…                     → forever: channel 1's program 10, save, program 20, save …; prints `saved N` after each
//                                         (a test kills the probe while it saves)
//   queue                               → prints the messages the instrument received since the last look (hex, `B2 00 00`), then `end`
//   quit
/// One line, written at once (stdout is a pipe: no buffering to wait for).
func say(_ text: String) { FileHandle.standardOutput.write(Data((text + "\n").utf8)) }
let args = CommandLine.arguments
guard args.count == 2 || args.count == 3 else {
    FileHandle.standardError.write(Data("usage: carillon-web-probe MAPPING.yaml [SOUNDFONT]\n".utf8))
    exit(2)
}
let soundFont = args.count == 3 ? args[2] : nil
let hub: ControlHub
do { hub = ControlHub(mapping: try ControlMapping.load(path: args[1])) } catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}
// A mapping with scenes starts in its first, as `live` does (HostAssembly.makeHub).
if hub.mapping?.scenes.isEmpty == false { hub.set(.sceneSelect, to: 0) }
// The engine's side: what the hub publishes reaches the renderer as in a host (HostAssembly.connect).
let instrument = KeepingInstrument()
let renderer = Renderer(instrument: instrument, eventCapacity: 4096)
renderer.prepare(sampleRate: 48_000, maxFrames: 256)
let events = EventQueueProducer(renderer.events)
HostAssembly(options: HostOptions()).connect(hub, to: renderer, events: events, transport: nil)
let keyboard = KeyboardRouting(hub: hub, events: events)
keyboard.start()
let follower = ChannelSelectionsFollower(renderer.selections, hub: hub)
// The render thread, and the control loop's poll after each block.
Thread.detachNewThread {
    let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 512)
    while true {
        renderer.render(frames: 256, into: output)
        follower.poll()
        usleep(5_000)
    }
}
/// The channel strips' fonts, found as the CLI finds them (HostSession.channelFont).
func fontLookup(hub: ControlHub, session: String) -> ChannelFontLookup {
    { channel in
        let own = hub.mapping?.channels.first { $0.channel == channel }?.soundFont
        let found: Result<(path: String, presets: [FontPreset]), PresetNameError> = PresetCatalog.font(own, sessionFont: session)
        return found.map { ChannelFont(path: $0.path, presets: $0.presets) }
    }
}
let fonts = soundFont.map { fontLookup(hub: hub, session: $0) }
let surface: WebSurface
do {
    surface = try WebSurface(hub: hub, configuration: WebSurfaceConfiguration(port: 0), fonts: fonts)
    say("listening \(try surface.start())")
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}
while let line = readLine() {
    let w = line.split(separator: " ").map(String.init)
    switch w.first {
    case "cc" where w.count == 4:
        guard let ch = UInt8(w[1]), (1...16).contains(ch), let cc = UInt8(w[2]), cc < 128, let v = UInt8(w[3]), v < 128 else {
            say("error bad cc"); continue
        }
        _ = hub.receive(.cc(UInt7(cc), value: UInt7(v), channel: Channel(ch - 1)))
        say("ok")
    case "pc" where w.count == 3:
        guard let ch = UInt8(w[1]), (1...16).contains(ch), let p = UInt8(w[2]), p < 128 else {
            say("error bad pc"); continue
        }
        _ = hub.receive(.programChange(UInt7(p), channel: Channel(ch - 1)))
        say("ok")
    case "key" where w.count >= 2:
        let bytes = w.dropFirst().compactMap { UInt8($0, radix: 16) }
        let parsed = MIDIByteParser.parsedMessages(in: bytes, state: MIDIByteParser()).messages
        guard bytes.count == w.count - 1, parsed.count == 1, let message = parsed.first else { say("error bad message"); continue }
        keyboard.route(message, from: 0, at: .afterLast)
        say("ok")
    case "scene":
        say(hub.currentScene ?? "-")
    case "value" where w.count == 2:
        guard let address = ParameterAddress(w[1]) else { say("error unknown parameter"); continue }
        say("\(hub.value(of: address))")
    case "states":
        for s in hub.controlStates { say("\(s.name)\t\(s.value)\t\(s.display)") }
        say("end")
    case "preset" where w.count == 4:
        guard let ch = UInt8(w[1]), (1...16).contains(ch), let bank = Int(w[2]), let p = UInt8(w[3]), p < 128 else {
            say("error bad preset"); continue
        }
        hub.selectPreset(onChannel: Channel(ch - 1), bank: bank, program: UInt7(p))
        say("ok")
    case "save" where w.count >= 2:
        do { try hub.saveScene(named: w.dropFirst().joined(separator: " ")); say("ok") } catch { say("error \(error)") }
    case "save-loop" where w.count >= 2:
        let name = w.dropFirst().joined(separator: " ")
        for n in 0... {
            hub.selectPreset(onChannel: Channel(0), bank: 0, program: n % 2 == 0 ? 10 : 20)
            do { try hub.saveScene(named: name) } catch { say("error \(error)"); break }
            say("saved \(n)")
        }
    case "queue":
        for message in instrument.take() { say("\(message)") }
        say("end")
    case "quit":
        surface.stop()
        exit(0)
    default:
        say("error unknown command")
    }
}
surface.stop()
