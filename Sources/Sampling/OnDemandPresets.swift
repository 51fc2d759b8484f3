import FluidSynth
import MIDI
import Parameters
import Synchronization
import Threads
#if canImport(Glibc)
import Glibc
#endif

/// Live's presets loaded as the player selects them, never on the render thread.
///
/// The synth has `synth.dynamic-sample-loading` on, so loading the font reads
/// its preset data and no sample. At start the presets the rig names (each
/// channel's, each scene's, what every channel plays at start) are pinned;
/// later, a program change that selects any other preset waits
/// (`OnDemandInstrument`) while this loader's thread pins it, and is sent
/// once its samples are in memory. Pinned presets stay pinned for the
/// session, so their samples are never freed.
///
/// Why a window: FluidSynth 2.3 loads a preset's samples on the thread that
/// selects it and frees them when no channel selects it any more
/// (fluid_defsfont.c, `load_preset_samples`/`unload_preset_samples`), and both
/// count a sample's selecting presets in a plain field (`preset_count`) that
/// pinning counts in too. So the loader pins only inside a window the render
/// thread grants at a block's start and sends no program change or SysEx in;
/// notes, controllers and the audio go on in it (a note reads samples already
/// loaded, a render touches no field a pin writes). `synth.threadsafe-api` is
/// off: nothing here takes FluidSynth's lock.
public final class OnDemandPresets: @unchecked Sendable {
    /// A preset's state, per bank (0…128) and program.
    enum State: UInt8 {
        /// No font of the synth has the preset.
        case absent = 0
        /// In the main font, its samples not loaded.
        case unloaded
        /// The render thread asked for it.
        case requested
        /// Pinned: selecting it loads and frees nothing.
        case ready
        /// FluidSynth could not read its samples: a program change to it is
        /// refused (selecting it would read the font on the render thread).
        case failed
    }

    static let banks = 129, programs = 128
    private let states: UnsafeMutablePointer<Atomic<UInt8>>
    /// The window: 0 closed, 1 the loader asks, 2 the render thread granted it.
    let window = Atomic<Int>(0)
    private let wake = WakeSignal()
    private let stopping = Atomic<Bool>(false)
    private var thread: JoinableThread?
    private let synth: Synth
    private let mainFontID: Int32
    /// The loader says here what it loaded and how long the program change waited.
    private let log: HostLog?
    /// Preset names by table index, for the log.
    private let names: [Int: String]

    /// Presets the loader pinned, program changes the render thread held and
    /// the time each waited, for the view and the tests. Any thread.
    private let loadedCount = Atomic<Int>(0)
    private let failedCount = Atomic<Int>(0)
    /// A preset FluidSynth selected that was not pinned (a channel's drum
    /// switch by SysEx or XG bank select, which the render thread cannot
    /// foresee): FluidSynth loaded it on the render thread. Counted; then pinned.
    let unforeseen = Atomic<Int>(0)
    /// The longest time (ns) from a request to its preset's samples in memory.
    private let longestLoad = Atomic<Int>(0)
    private let requestedAt: UnsafeMutablePointer<Atomic<Int>>

    /// The table for `synth`, whose main font is `mainFont` (loaded with
    /// dynamic sample loading) and whose other fonts are `otherFonts`: every
    /// preset of the main font in banks above 128 and of the others is pinned
    /// now (the render thread's table covers banks 0…128 of the main font), as
    /// is every preset in `rig` (its bank and program resolved as a program
    /// change resolves them) and every channel's present preset. Before the
    /// render thread runs. Throws when FluidSynth cannot pin one.
    public init(synth: Synth, mainFont: SoundFont, otherFonts: [SoundFont], rig: [ChannelSetup],
                log: HostLog? = nil) throws(FluidSynthError) {
        self.synth = synth
        self.log = log
        mainFontID = mainFont.id
        let count = Self.banks * Self.programs
        states = .allocate(capacity: count)
        requestedAt = .allocate(capacity: count)
        for i in 0..<count {
            (states + i).initialize(to: Atomic(State.absent.rawValue))
            (requestedAt + i).initialize(to: Atomic(0))
        }
        var inMain = Set<Int>(), names: [Int: String] = [:]
        for preset in mainFont.presets {
            if let i = Self.index(bank: preset.bank, program: preset.program) {
                states[i].store(State.unloaded.rawValue, ordering: .relaxed)
                inMain.insert(i)
                names[i] = preset.name
            } else {
                try synth.pin(Synth.PresetAddress(soundFontID: mainFont.id, bank: Int32(preset.bank), program: Int32(preset.program)))
            }
        }
        self.names = names
        for font in otherFonts {
            for preset in font.presets {
                try synth.pin(Synth.PresetAddress(soundFontID: font.id, bank: Int32(preset.bank), program: Int32(preset.program)))
                // FluidSynth looks in the main font first (loaded last, first in its list).
                if let i = Self.index(bank: preset.bank, program: preset.program), !inMain.contains(i) {
                    states[i].store(State.ready.rawValue, ordering: .relaxed)
                }
            }
        }
        // A scene selects by bank select and program change (`ControlHub.selectPreset`): on channel 10, in bank 128.
        for setup in rig where setup.soundFont == nil && (setup.bank != nil || setup.program != nil) {
            let drum = setup.channel.intValue == 9
            try pinNow(bank: drum ? 128 : setup.bank ?? 0, program: Int(setup.program?.value ?? 0), drum: drum)
        }
        for channel in 0..<16 {
            if let preset = synth.preset(onChannel: channel), preset.soundFontID == mainFont.id {
                try pinNow(bank: Int(preset.bank), program: Int(preset.program))
            }
        }
    }

    deinit {
        stop()
        states.deinitialize(count: Self.banks * Self.programs)
        states.deallocate()
        requestedAt.deinitialize(count: Self.banks * Self.programs)
        requestedAt.deallocate()
    }

    static func index(bank: Int, program: Int) -> Int? {
        guard (0..<banks).contains(bank), (0..<programs).contains(program) else { return nil }
        return bank * programs + program
    }

    /// Pins what a program change to `bank`:`program` would select (see `resolve`).
    private func pinNow(bank: Int, program: Int, drum: Bool = false) throws(FluidSynthError) {
        guard let i = resolve(bank: bank, program: program, drum: drum),
              state(i) != .ready else { return }
        try synth.pin(Synth.PresetAddress(soundFontID: mainFontID, bank: Int32(i / Self.programs), program: Int32(i % Self.programs)))
        states[i].store(State.ready.rawValue, ordering: .releasing)
    }

    /// Starts the loader's thread. Once, from the owner thread.
    public func start() throws(ThreadError) {
        guard thread == nil else { return }
        thread = try JoinableThread(name: "preset loader") { [self] in run() }
    }

    /// Ends the loader's thread (a pin under way finishes first). Idempotent.
    public func stop() {
        stopping.store(true, ordering: .sequentiallyConsistent)
        wake.increment()
        thread?.join()
        thread = nil
    }

    // MARK: The render thread's side (no allocation, no lock, no system call but a semaphore post)

    /// The preset a program change to `program` on `channel` selects now, as
    /// fluid_synth_program_change finds it: the channel's bank (128 on a drum
    /// channel: `drum`, as `DrumChannels` follows it), else for drums 128:0,
    /// else bank 0 and the program, else 0:0. Nil: the bank is beyond the
    /// table (its presets are all pinned) or no font has any of them
    /// (FluidSynth selects nothing, as without this).
    @inline(__always)
    func target(channel: Int, program: Int, drum: Bool) -> Int? {
        resolve(bank: drum ? 128 : synth.storedBank(onChannel: channel), program: program, drum: drum)
    }

    /// fluid_synth_program_change's search in the table: the preset, else for
    /// drums 128:0, else bank 0 and the program, else 0:0; nil when none exists.
    @inline(__always)
    func resolve(bank: Int, program: Int, drum: Bool) -> Int? {
        guard let exact = Self.index(bank: bank, program: program) else { return nil }
        if state(exact) != .absent { return exact }
        if drum { return state(128 * Self.programs) != .absent ? 128 * Self.programs : nil }
        if state(program) != .absent { return program }
        return state(0) != .absent ? 0 : nil
    }

    @inline(__always)
    func state(_ index: Int) -> State {
        State(rawValue: states[index].load(ordering: .acquiring)) ?? .absent
    }

    /// Asks the loader for the preset at `index` if it is not loaded or asked
    /// for yet. Render thread (or any thread: the exchange is atomic).
    @inline(__always)
    func request(_ index: Int) {
        let (exchanged, _) = states[index].compareExchange(expected: State.unloaded.rawValue, desired: State.requested.rawValue,
                                                          ordering: .acquiringAndReleasing)
        guard exchanged else { return }
        requestedAt[index].store(Int(monotonicNanoseconds()), ordering: .relaxed)
        wake.increment()
    }

    /// At a block's start: grants the window the loader asked for. True while
    /// the window is open (asked or granted): no program change or SysEx may reach the synth.
    @inline(__always)
    func windowOpen() -> Bool {
        switch window.load(ordering: .acquiring) {
        case 0: return false
        case 1: window.store(2, ordering: .releasing); return true
        default: return true
        }
    }

    /// After FluidSynth selected a preset on `channel`: one not pinned was
    /// loaded there, on this thread. Counts it and asks the loader to pin it.
    @inline(__always)
    func checkSelected(onChannel channel: Int) {
        guard let preset = synth.preset(onChannel: channel), preset.soundFontID == mainFontID,
              let i = Self.index(bank: Int(preset.bank), program: Int(preset.program)) else { return }
        let s = state(i)
        guard s == .unloaded || s == .requested || s == .failed else { return }
        unforeseen.add(1, ordering: .relaxed)
        request(i)
    }

    // MARK: The loader's thread

    private func run() {
        var seen = 0
        while true {
            seen = wake.wait(spins: 0) { $0 != seen }
            if stopping.load(ordering: .sequentiallyConsistent) { return }
            var wanted: [Int] = []
            for i in 0..<(Self.banks * Self.programs) where state(i) == .requested { wanted.append(i) }
            guard !wanted.isEmpty else { continue }
            guard openWindow() else { return }
            for i in wanted {
                let address = Synth.PresetAddress(soundFontID: mainFontID, bank: Int32(i / Self.programs), program: Int32(i % Self.programs))
                let name = "\(i / Self.programs):\(i % Self.programs) \(names[i] ?? "")"
                do throws(FluidSynthError) {
                    try synth.pin(address)
                } catch {
                    // FluidSynth could not read the file (gone, unreadable): selecting the preset
                    // would try again on the render thread, so its program changes are refused.
                    failedCount.add(1, ordering: .relaxed)
                    log?.append("preset \(name): samples not loaded (\(error)); program changes to it are ignored, the channel keeps its sound")
                    states[i].store(State.failed.rawValue, ordering: .releasing)
                    continue
                }
                loadedCount.add(1, ordering: .relaxed)
                let waited = Int(monotonicNanoseconds()) - requestedAt[i].load(ordering: .relaxed)
                log?.append("preset \(name) loaded, \(waited / 1_000_000) ms after its program change")
                var longest = longestLoad.load(ordering: .relaxed)
                while waited > longest {
                    let (done, now) = longestLoad.compareExchange(expected: longest, desired: waited, ordering: .relaxed)
                    if done { break }
                    longest = now
                }
                states[i].store(State.ready.rawValue, ordering: .releasing)
            }
            window.store(0, ordering: .releasing)
            reportDropped()
        }
    }

    /// Messages the render thread's store of held messages refused (`HeldMessages`), told once off it.
    let droppedNoteOns = Atomic<Int>(0), droppedOthers = Atomic<Int>(0)
    private var droppedSaid = false

    /// Says once, on the loader's thread, that held messages were dropped.
    private func reportDropped() {
        guard !droppedSaid else { return }
        let notes = droppedNoteOns.load(ordering: .relaxed), others = droppedOthers.load(ordering: .relaxed)
        guard notes + others > 0 else { return }
        droppedSaid = true
        log?.append("while presets loaded, \(notes) note-ons and \(others) other messages found the store of waiting messages full and were dropped (no note was left sounding); more are counted, not said")
    }

    /// Asks the render thread for the window and waits until it grants it (at
    /// its next block's start). False when stopping.
    private func openWindow() -> Bool {
        window.store(1, ordering: .releasing)
        while window.load(ordering: .acquiring) != 2 {
            if stopping.load(ordering: .sequentiallyConsistent) { window.store(0, ordering: .releasing); return false }
            usleep(500)
        }
        return true
    }

    // MARK: Figures

    /// What the loader did so far. Any thread.
    public struct Figures: Sendable, Equatable {
        /// Presets pinned after start, on the loader's thread.
        public var loaded: Int
        /// Presets whose samples FluidSynth could not read.
        public var failed: Int
        /// Presets FluidSynth loaded on the render thread (see `unforeseen`).
        public var unforeseen: Int
        /// The longest wait from a program change to its preset's samples in memory, in seconds.
        public var longestLoadSeconds: Double
        /// Note-ons, and other messages, dropped because too many waited behind loading presets.
        public var droppedNoteOns: Int
        public var droppedOthers: Int
    }

    public var figures: Figures {
        Figures(loaded: loadedCount.load(ordering: .relaxed), failed: failedCount.load(ordering: .relaxed),
                unforeseen: unforeseen.load(ordering: .relaxed),
                longestLoadSeconds: Double(longestLoad.load(ordering: .relaxed)) / 1e9,
                droppedNoteOns: droppedNoteOns.load(ordering: .relaxed), droppedOthers: droppedOthers.load(ordering: .relaxed))
    }

    /// Whether `bank`:`program` of the main font is pinned now. Any thread.
    public func isLoaded(bank: Int, program: Int) -> Bool {
        guard let i = Self.index(bank: bank, program: program) else { return false }
        return state(i) == .ready
    }
}
