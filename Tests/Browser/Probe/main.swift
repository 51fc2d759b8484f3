import Controls
import Foundation
import MIDI
import MappingFiles
import Parameters
import WebSurface

// Driver of the browser tests (Tests/Browser/web_surface_test.py); not shipped.
// Serves a WebSurface over a ControlHub loaded from a mapping, on loopback,
// prints `listening PORT`, then answers one command per stdin line:
//   cc CHANNEL(1-16) CONTROLLER VALUE   → the hub receives it, as from a controller; prints `ok`
//   pc CHANNEL(1-16) PROGRAM            → a program change, likewise (a scene selector's); prints `ok`
//   scene                               → prints the current scene's name (`-` for none)
//   value PARAMETER                     → prints the hub's value of the parameter
//   states                              → prints `name<TAB>value<TAB>display` per control, then `end`
//   quit
/// One line, written at once (stdout is a pipe: no buffering to wait for).
func say(_ text: String) { FileHandle.standardOutput.write(Data((text + "\n").utf8)) }
let args = CommandLine.arguments
guard args.count == 2 else {
    FileHandle.standardError.write(Data("usage: carillon-web-probe MAPPING.yaml\n".utf8))
    exit(2)
}
let hub: ControlHub
do { hub = ControlHub(mapping: try ControlMapping.load(path: args[1])) } catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}
// A mapping with scenes starts in its first, as `live` does (HostAssembly.makeHub).
if hub.mapping?.scenes.isEmpty == false { hub.set(.sceneSelect, to: 0) }
let surface: WebSurface
do {
    surface = try WebSurface(hub: hub, configuration: WebSurfaceConfiguration(port: 0))
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
    case "scene":
        say(hub.currentScene ?? "-")
    case "value" where w.count == 2:
        guard let address = ParameterAddress(w[1]) else { say("error unknown parameter"); continue }
        say("\(hub.value(of: address))")
    case "states":
        for s in hub.controlStates { say("\(s.name)\t\(s.value)\t\(s.display)") }
        say("end")
    case "quit":
        surface.stop()
        exit(0)
    default:
        say("error unknown command")
    }
}
surface.stop()
