// swift-tools-version: 6.1
import PackageDescription

// Targets and their allowed imports are drawn in DESIGN.md.
let package = Package(
    name: "Carillon",
    platforms: [.macOS(.v15)],  // Synchronization's Atomic and Mutex
    products: [
        .executable(name: "carillon", targets: ["CarillonCLI"]),
                .library(name: "MIDI", targets: ["MIDI"]),
        // libcarillonc.so: the offline render behind a C ABI, for the Python package (python/)
        // (not "carillon": product names are one namespace, and that is the executable).
        .library(name: "carillonc", type: .dynamic, targets: ["CarillonC"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
        // The web surface's HTTP + WebSocket server; no default traits (swift-configuration) to keep the build small.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0", traits: []),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.0.0"),
        // Already in the graph through Hummingbird; named to quiet its logger (see WebSurface.logger).
        .package(url: "https://github.com/apple/swift-log", from: "1.5.0"),
        // Also through Hummingbird; named for the web surface's gate in front of the WebSocket upgrade (UpgradeGate.swift).
        .package(url: "https://github.com/apple/swift-nio", from: "2.65.0"),
    ],
    targets: [
        // Pure Swift MIDI core: no Foundation, no C.
        .target(name: "MIDI"),

        // C libraries, through pkg-config, with the Debian package that provides them.
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "CFluidSynth", pkgConfig: "fluidsynth", providers: [.apt(["libfluidsynth-dev"])]),
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(name: "CEBUR128", pkgConfig: "libebur128", providers: [.apt(["libebur128-dev"])]),
        .systemLibrary(name: "CSampleRate", pkgConfig: "samplerate", providers: [.apt(["libsamplerate0-dev"])]),
        .systemLibrary(name: "CFFTW", pkgConfig: "fftw3f", providers: [.apt(["libfftw3-dev"])]),
        .systemLibrary(name: "CJACK", pkgConfig: "jack", providers: [.apt(["libjack-jackd2-dev"])]),
        .systemLibrary(name: "CLilv", pkgConfig: "lilv-0", providers: [.apt(["liblilv-dev"])]),
        .systemLibrary(name: "CLiblo", pkgConfig: "liblo", providers: [.apt(["liblo-dev"])]),
        // glibc's <malloc.h> (mallopt, malloc_trim), which the Glibc module leaves out: no library of its own.
        .systemLibrary(name: "CMalloc"),

        // Joinable POSIX threads and real-time scheduling, with their own error: for the
        // ALSA input, the outputs and the render pool alike; the heap's settings for a render.
        .target(name: "Threads", dependencies: ["CMalloc"]),

        // Swift wrappers over the C libraries: typed errors, handles released in deinit.
        .target(name: "ALSA", dependencies: ["CALSA", "MIDI", "Threads"]),
        .target(name: "FluidSynth", dependencies: ["CFluidSynth"]),
        .target(name: "SoundFile", dependencies: ["CSndFile"]),
        .target(name: "JACK", dependencies: ["CJACK"]),
        // LV2 plugins through lilv, the reference host library ("did you mean" from Parameters).
        // The LV2 log feature's printf/vprintf: variadic C, which Swift cannot define.
        .target(name: "CLV2Log"),
        .target(name: "LV2", dependencies: ["CLilv", "CLV2Log", "Parameters", "Threads"]),
        // Ableton Link (Debian's ableton-link-dev: header-only C++ over asio, no pkg-config file;
        // its headers are in /usr/include/ableton): a C shim that catches what Link throws, and
        // the Swift wrapper with typed errors. Link runs threads of its own: -pthread.
        .target(name: "CLink", cxxSettings: [.define("LINK_PLATFORM_LINUX", to: "1")],
                linkerSettings: [.linkedLibrary("pthread")]),
        .target(name: "Link", dependencies: ["CLink"]),

        // Measurements and conversions of audio: loudness and true peak (libebur128),
        // resampling (libsamplerate), spectrum (FFTW).
        .target(name: "Analysis", dependencies: ["CEBUR128", "CSampleRate", "CFFTW"]),

        // The parameter table: every address, its range, unit, default and how the engine
        // applies it. No Foundation, no Yams: the engine and the controls both read it.
        .target(name: "Parameters", dependencies: ["MIDI"]),

        // The keyboard player's rig: zones (splits, layers, transposition, velocity, external ports)
        // as data, and the input thread's router with its ledger of held notes. No Foundation.
        .target(name: "Rig", dependencies: ["MIDI"]),

        // Controls, along their flow (the MidiWidgetsManager equivalent): what a control is (its MIDI
        // source, curve, kind), then the mapping files that declare them, then the surface and hub that run them.
        .target(name: "ControlDefinitions", dependencies: ["MIDI", "Parameters"]),
        .target(name: "MappingFiles", dependencies: [
            "MIDI", "Parameters", "Rig", "ControlDefinitions", .product(name: "Yams", package: "Yams"),
        ]),
        .target(name: "Controls", dependencies: ["MIDI", "Parameters", "Rig", "ControlDefinitions", "MappingFiles"]),

        // The render loop, mixer, sequencer and queues: no C module, testable with a fake instrument.
        .target(name: "Engine", dependencies: ["MIDI", "Parameters"]),

        // In time with other gear: MIDI clock out worked out block by block from the piece's
        // tempo map, MIDI clock in followed. Pure: no I/O, no Foundation.
        .target(name: "Sync", dependencies: ["MIDI", "Engine"]),

        // The stages after the engine, along the data flow; each imports only the ones before it.
        // The sampler: FluidSynth synths built from options (live, play, render alike), the
        // parallel pool that spreads a piece's notes over several, the samples a piece loads.
        .target(name: "Sampling", dependencies: ["MIDI", "Parameters", "Engine", "FluidSynth", "Threads"]),
        // Everything between the instrument and the output that live, play and render share:
        // the host assembly, LV2 plugins, audio-file tracks, parameter routing, pieces.
        .target(name: "Hosting", dependencies: [
            "MIDI", "Parameters", "Controls", "MappingFiles", "Rig", "Engine", "Sampling", "LV2", "SoundFile", "Analysis", "Threads",
        ]),
        // A live or play session: MIDI input (ALSA, JACK), outputs, recording, mapping reloads.
        .target(name: "LiveSession", dependencies: [
            "MIDI", "Parameters", "Controls", "MappingFiles", "Rig", "Engine", "Sampling", "Hosting", "ALSA", "JACK", "FluidSynth", "LV2", "Sync",
            "SoundFile", "Analysis", "Threads", "Link",
        ]),
        // The offline render of one piece: its plan (limits, augmentation, stem groups, a take),
        // the block loop, and what it yields (labels, stems and their report, loudness).
        .target(name: "OfflineRender", dependencies: [
            "MIDI", "Parameters", "Controls", "MappingFiles", "Engine", "Sampling", "Hosting", "FluidSynth", "LV2", "SoundFile",
            "Analysis", "Threads",
        ]),
        // Dataset outputs of many renders: the batch's items and workers, each rendering's
        // output set (moved into place whole), the manifest, the SoundFont pick.
        .target(name: "RenderBatch", dependencies: ["OfflineRender", "Sampling", "SoundFile", "Threads"]),

        // The offline render in memory behind a C ABI (@_cdecl, opaque handles): MIDI bytes and a
        // JSON object of the CLI's long option names in, float frames, labels and facts out.
        .target(name: "CarillonC", dependencies: [
            "OfflineRender", "RenderBatch", "Parameters", "MappingFiles", "Engine", "Sampling", "Hosting", "Analysis", "Threads",
        ]),

        // OSC (Open Sound Control) over UDP: liblo parses and builds the packets; the address
        // space, subscriptions and timetags are Carillon's. Not `Carillon`: notes go to a sink the session gives.
        .target(name: "OSC", dependencies: ["CLiblo", "Controls", "Parameters", "MIDI", "Threads"]),

        // Every control and meter in a browser: HTTP + WebSocket server, the page embedded.
        .target(name: "WebSurface", dependencies: [
            "Controls", "ControlDefinitions", "MappingFiles", "Parameters", "MIDI",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
        ]),

        // The `carillon` command-line tool's commands, one file per subcommand: a library, so the
        // tests link them without the executable's release linker flags.
        .target(name: "CarillonCommands", dependencies: [
            "Sampling", "Hosting", "LiveSession", "OfflineRender", "RenderBatch",
            "MIDI", "Parameters", "Controls", "MappingFiles", "Engine", "ALSA", "SoundFile", "WebSurface", "Analysis", "LV2", "Threads", "OSC",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        // `carillon` itself: main.swift, and how the shipped binary is linked.
        .executableTarget(name: "CarillonCLI", dependencies: ["CarillonCommands"], exclude: ["render.order"], swiftSettings: [
            // Compiled against the static runtime too, so the libraries Foundation needs are linked.
            .unsafeFlags(["-static-stdlib"], .when(configuration: .release)),
        ], linkerSettings: [
            // Release: the Swift runtime and Foundation linked in (their shared objects cost a
            // render 7.5 MiB resident, mostly relocated data), relative relocations packed
            // (2.5 MiB of table read at every start otherwise) and no symbol table exported:
            // linns_basket's peak RSS 50.0 → 41.9 MiB (README, "At scale"). Still a PIE.
            // The functions a render runs first in .text (render.order, from scripts/render-order):
            // scattered, the 1 MiB of code it runs kept 10.1 MiB of pages resident; together
            // 5.8, and linns_basket's one-synth peak is 46.2 → 41.8 MiB (Benchmarks/README.md,
            // "… code order"); with every function of ours in a section of its own (the end of
            // this file), code resident 5.9 → 4.5 MiB, the peak 41.3 → 39.9–40.0 (medians).
            // A name the file no longer matches is only placed later, unwarned:
            // the file ages into a smaller gain, it does not break the build; scripts/test's
            // scripts/check-render-order fails once under 90% of its names are still defined.
            .unsafeFlags(["-static-stdlib", "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
                          "-Xlinker", "--no-export-dynamic",
                          "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/Sources/CarillonCLI/render.order",
                          "-Xlinker", "--no-warn-symbol-ordering"], .when(configuration: .release)),
        ]),

        // Benchmark driver (not a test): measured side by side with peers by Benchmarks/*.
        .executableTarget(name: "CarillonBench", dependencies: ["Parameters", "Sampling", "Hosting", "OfflineRender", "Engine", "FluidSynth", "MIDI"], path: "Benchmarks/CarillonBench"),

        // The zone router's cost per input event (Benchmarks/README.md, "Zones"): Rig alone, quick to build in release.
        .executableTarget(name: "rig-bench", dependencies: ["Rig", "MIDI"], path: "Benchmarks/RigBench",
                         linkerSettings: [.linkedLibrary("m")]),  // round, floor: no Foundation to bring libm

        // The manifest's JSON written and read back two ways (Benchmarks/README.md, "JSON"): Foundation only.
        .executableTarget(name: "json-bench", path: "Benchmarks/JSONBench"),

        // Driver of the ALSA integration tests run in the VM (scripts/test-alsa-vm); not shipped.
        .executableTarget(name: "carillon-alsa-probe", dependencies: ["ALSA", "CALSA", "MIDI", "Threads"], path: "Tests/ALSAIntegration/Probe"),

        // Driver of the JACK test (scripts/test-jack): plays a MIDI file into a JACK MIDI port, records two audio ports; not shipped.
        .executableTarget(name: "carillon-jack-probe", dependencies: ["JACK", "MIDI", "SoundFile"], path: "Tests/JACKIntegration/Probe"),

        // Driver of the browser tests (Tests/Browser): a WebSurface over a ControlHub, fed from stdin; not shipped.
        .executableTarget(name: "carillon-web-probe", dependencies: ["Parameters", "WebSurface", "Controls", "MappingFiles", "MIDI",
                                                                "Engine", "Hosting", "Sampling"], path: "Tests/Browser/Probe"),

        // Driver of the Link test (LinkTests): one Link peer driven over stdin; not shipped.
        .executableTarget(name: "carillon-link-probe", dependencies: ["Link"], path: "Tests/LinkIntegration/Probe"),

        .testTarget(name: "MIDITests", dependencies: ["MIDI"]),
        .testTarget(name: "ControlsTests", dependencies: ["Parameters", "Controls", "ControlDefinitions", "MappingFiles", "MIDI", "Rig", "SeededRandom"]),
        .testTarget(name: "RigTests", dependencies: ["Rig", "MIDI", "CAllocationCounter", "SeededRandom"]),
        // Test support: counts heap calls on a thread (checks "no allocation in the block loop").
        .target(name: "CAllocationCounter", path: "Tests/Support/CAllocationCounter"),
        // Child processes tests can always end (own process group, SIGKILL, bounded reap): oscdump, live.
        .target(name: "ChildProcess", path: "Tests/Support/ChildProcess"),
        // A bare HTTP/WebSocket client (exact headers, frames by hand, can stop reading): the web surface's and live --web's tests.
        .target(name: "WebSocketClient", path: "Tests/Support/WebSocketClient"),
        // A seeded generator for the tests' random inputs (fuzz and model tests).
        .target(name: "SeededRandom", path: "Tests/Support/SeededRandom"),
        // Audio compared as envelopes (RMS windows, their correlation): renders against fluidsynth's.
        .target(name: "AudioCompare", dependencies: ["SoundFile"], path: "Tests/Support/AudioCompare"),
        // A renderer playing a piece with its MIDI clock out collected block by block (the clock tests).
        .target(name: "ClockOutRig", dependencies: ["Engine", "Sync"], path: "Tests/Support/ClockOutRig"),

        .testTarget(name: "EngineTests", dependencies: ["Parameters", "Engine", "MIDI", "CAllocationCounter"]),
        .testTarget(name: "SyncTests", dependencies: ["Sync", "Engine", "MIDI", "ClockOutRig"]),
        .testTarget(name: "LinkTests", dependencies: ["Link"]),
        .testTarget(name: "FluidSynthTests", dependencies: ["FluidSynth"]),
        .testTarget(name: "LV2Tests", dependencies: ["LV2", "CLV2Log", "CLilv", "CAllocationCounter"]),
        .testTarget(name: "SoundFileTests", dependencies: ["SoundFile"]),
        .testTarget(name: "AnalysisTests", dependencies: ["Analysis"]),
        .testTarget(name: "ALSATests", dependencies: ["ALSA", "CALSA", "MIDI", "Threads"]),
        // The four stages after the engine, in one target for their shared fixtures; folders mirror Sources/.
        .testTarget(name: "CarillonTests", dependencies: ["Parameters", "Sampling", "Hosting", "LiveSession", "OfflineRender", "RenderBatch", "Analysis", "ALSA", "MIDI", "Controls", "ControlDefinitions", "MappingFiles", "Rig", "Engine", "SoundFile", "FluidSynth", "LV2", "Threads", "Sync", "JACK", "CAllocationCounter", "AudioCompare", "ClockOutRig"]),
        .testTarget(name: "CarillonCLITests", dependencies: [
            // The help-defaults test parses the commands and reads the values they hand the library.
            "CarillonCommands", "Sampling", "Hosting", "LiveSession", "OfflineRender", "Parameters", "Controls", "MappingFiles", "SoundFile", "ChildProcess", "AudioCompare", "WebSocketClient", .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .testTarget(name: "OSCTests", dependencies: ["OSC", "CLiblo", "Controls", "MappingFiles", "Parameters", "MIDI", "ChildProcess"]),
        .testTarget(name: "WebSurfaceTests", dependencies: ["Parameters", "WebSurface", "Controls", "ControlDefinitions", "MappingFiles", "MIDI", "WebSocketClient"]),
    ]
)

// Release: every function of ours in a section of its own, for render.order. Without it swiftc
// gives one only to public functions; the rest of a file (internal and private functions,
// thunks, value witnesses, outlined copies) share its `.text`, and one function of it that a
// render runs pulled the whole section to the front: 8.3 of the 8.5 MiB placed there.
// Dependencies are compiled as they are (their own flags; scripts/render-order leaves their
// shared sections alone where a render runs little of them).
for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? [])
        + [.unsafeFlags(["-Xfrontend", "-function-sections"], .when(configuration: .release))]
}
