import ControlDefinitions
import Controls
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import Parameters
import Synchronization

/// Every control and meter in a browser: one page served from the binary, a
/// WebSocket at `/ws` speaking `WebProtocol`, in front of a `ControlHub`.
///
/// A widget moved on a page goes through `ControlHub.setControl` — the path a
/// hardware control takes (curves, steps, soft takeover). What the hub holds
/// goes to every page: a pump reads the controls' states every
/// `updateInterval` (20 ms), sends what changed to each page's bounded
/// outbox, and the status every `statusInterval`. The web side never
/// subscribes to the hub and never touches the render thread: hub calls cost
/// the same with or without pages.
///
/// In step with the hub: when another mapping is swapped in (a reload, a
/// MIDI-learned binding), the surface's list of controls (names, ranges,
/// curves, steps) is rebuilt from it and every open page gets a new `hello`
/// at the next pump tick; a page opened later gets the new one at once. A
/// page never holds a control the host no longer has. The rig rides along:
/// the hello holds the mapping's scenes, the current one and its zones, and
/// a scene switch (`ControlHub.rigState` moved) sends them again as a
/// `scene` message at the next tick.
///
/// Security: see `WebSurfaceConfiguration` (loopback, token) and `Gate`
/// (Origin, Host). Threads: `start` and `stop` from one thread (the CLI's);
/// the server runs on its own event loops; `counters` from any thread.
public final class WebSurface: @unchecked Sendable {
    public typealias Failure = WebSurfaceConfiguration.Failure

    public enum StartFailure: Error, CustomStringConvertible {
        case configuration(Failure)
        case bind(String)
        public var description: String {
            switch self {
            case .configuration(let f): f.description
            case .bind(let why): "cannot serve the web surface: \(why)"
            }
        }
    }

    public let configuration: WebSurfaceConfiguration
    public let hub: ControlHub
    private let status: (@Sendable () -> SurfaceStatus)?
    private let transport: (@Sendable () -> TransportSnapshot)?
    /// Each channel's font and presets, for the channel strips' pickers (nil: no strips).
    private let fonts: ChannelFontLookup?
    private let counterBox = CounterBox()
    private let clients = Mutex<[Int: ClientOutbox]>([:])
    private let nextClient = Atomic<Int>(0)
    /// The controls as pages see them, rebuilt when the hub's mapping changes.
    private let layout: Mutex<Layout>
    private var task: Task<Void, Never>?
    private let boundPort = Mutex<Int?>(nil)
    /// Where "save as scene" runs: it waits for the disk (the file synced
    /// before its rename), which a connection's task must not. One at a time.
    private let saves = DispatchQueue(label: "carillon.web.scene-saves")

    /// `status`: the host's meters and counters (nil: none, e.g. a hub alone);
    /// `transport`: the piece's transport for `play` (nil: no transport bar);
    /// `fonts`: each channel's font, for the channel strips and their preset
    /// pickers (nil: no strips). Throws for a non-loopback address without a token.
    public init(hub: ControlHub, configuration: WebSurfaceConfiguration,
                status: (@Sendable () -> SurfaceStatus)? = nil,
                transport: (@Sendable () -> TransportSnapshot)? = nil,
                fonts: ChannelFontLookup? = nil) throws(Failure) {
        try configuration.validate()
        self.configuration = configuration
        self.hub = hub
        self.status = status
        self.transport = transport
        self.fonts = fonts
        layout = Mutex(Layout(hub.controlSet))
    }

    /// What a page's messages are read against: the controls by name (range,
    /// curve), the selectors' steps, and the hub's states they were taken with.
    struct Layout: Sendable {
        let controls: ControlSet
        let index: ControlIndex
        let steps: [String: Int]
        let groups: [ControlGroup]
        let pads: [String: PadPart]

        init(_ controls: ControlSet) {
            self.controls = controls
            groups = controls.groups
            pads = Dictionary(controls.definitions.compactMap { d in d.pad.map { (d.name, $0) } }, uniquingKeysWith: { a, _ in a })
            index = ControlIndex(states: controls.states, definitions: controls.definitions)
            steps = Dictionary(controls.definitions.filter { $0.kind == .selector }.map { ($0.name, $0.selectorSteps) },
                               uniquingKeysWith: { a, _ in a })
        }
    }
    typealias ControlSet = ControlHub.ControlSet

    /// The layout of the hub's current mapping, to read a page's message
    /// against (the one kept, unless the hub swapped in another mapping).
    private func currentLayout() -> Layout {
        let generation = hub.mappingGeneration
        return layout.withLock({ $0.controls.generation == generation ? $0 : nil }) ?? freshLayout()
    }

    /// The hub's controls and their states now (for a hello); kept as the
    /// current layout when its mapping is newer than the one kept.
    private func freshLayout() -> Layout {
        let fresh = Layout(hub.controlSet)
        layout.withLock { if $0.controls.generation < fresh.controls.generation { $0 = fresh } }
        return fresh
    }

    public var counters: WebSurfaceCounters { counterBox.snapshot }

    /// The port listened on (the one asked for, or the system's pick for port 0).
    public var port: Int? { boundPort.withLock { $0 } }

    /// The address to open, with the token when there is one.
    public var url: String {
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        let shown = host == "0.0.0.0" || host == "[::]" ? (ProcessInfo.processInfo.hostName) : host
        return "http://\(shown):\(port ?? configuration.port)/" + (configuration.token.map { "?token=\($0)" } ?? "")
    }

    /// Binds and serves; returns once listening (the bound port) or throws why not.
    @discardableResult
    public func start() throws(StartFailure) -> Int {
        let ready = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<Int, StartFailure>?>(nil)
        let app = makeApplication { port in
            outcome.withLock { $0 = .success(port) }
            ready.signal()
        }
        task = Task.detached { [self] in
            do {
                try await withThrowingDiscardingTaskGroup { group in
                    group.addTask { try await app.run() }
                    group.addTask { await self.pump() }
                }
            } catch is CancellationError {
            } catch {
                outcome.withLock { if $0 == nil { $0 = .failure(.bind("\(error)")) } }
                ready.signal()
            }
        }
        if ready.wait(timeout: .now() + 15) == .timedOut {
            task?.cancel()
            throw .bind("the server did not start within 15 s")
        }
        switch outcome.withLock({ $0 }) {
        case .success(let port)?:
            boundPort.withLock { $0 = port }
            return port
        case .failure(let f)?:
            task = nil
            throw f
        case nil:
            throw .bind("unknown failure")
        }
    }

    /// Closes every page's connection and the listening socket. Idempotent.
    public func stop() {
        guard let task else { return }
        self.task = nil
        task.cancel()
        let done = DispatchSemaphore(value: 0)
        Task.detached { _ = await task.value; done.signal() }
        _ = done.wait(timeout: .now() + 5)
        for c in clients.withLock({ Array($0.values) }) { c.close() }
    }

    deinit { stop() }

    // MARK: - Server

    private func makeApplication(onRunning: @escaping @Sendable (Int) -> Void) -> some ApplicationProtocol {
        let gate = Gate(configuration: configuration, counters: counterBox)
        let router = Router(context: BasicRequestContext.self)
        router.add(middleware: GateMiddleware(gate: gate))
        router.get("/") { _, _ in Self.htmlResponse(Page.html, status: .ok) }
        // A plain GET /ws (no upgrade headers), past the gate.
        router.get("/ws") { _, _ in Response(status: .badRequest) }
        let webSocketRouter = Router(context: BasicWebSocketRequestContext.self)
        webSocketRouter.ws("/ws", shouldUpgrade: { request, _ in
            // UpgradeGate has answered refusals 401/403 already; this check (not counted twice)
            // only backs it up (Hummingbird would answer 400).
            gate.check(request, webSocket: true, count: false) == nil ? .upgrade([:]) : .dontUpgrade
        }, onUpgrade: { [self] inbound, outbound, _ in
            await self.serve(inbound: inbound, outbound: outbound)
        })
        let maxFrame = configuration.maxFrameBytes
        let webSocketResponder = webSocketRouter.buildResponder()
        let server = HTTPServerBuilder { responder in
            GatedUpgradeChannel(inner: HTTP1WebSocketUpgradeChannel(responder: responder, webSocketResponder: webSocketResponder,
                                                                    configuration: .init(ws: .init(maxFrameSize: maxFrame))),
                                gate: gate)
        }
        return Application(
            router: router,
            server: server,
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: nil),
            onServerRunning: { channel in onRunning(channel.localAddress?.port ?? 0) },
            logger: Self.logger)
    }

    /// Hummingbird logs a normal stop (cancelled connections) as errors on stderr,
    /// over the live view; what matters (a failed bind) is thrown by `start`.
    static let logger: Logger = {
        var l = Logger(label: "carillon.web")
        l.logLevel = .critical
        return l
    }()

    static func htmlResponse(_ html: String, status: HTTPResponse.Status) -> Response {
        Response(status: status, headers: [
            .contentType: "text/html; charset=utf-8",
            .cacheControl: "no-store",
            // Everything is inline and same-origin; nothing may frame the page (clickjacking).
            .contentSecurityPolicy: "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:; frame-ancestors 'none'",
            .xContentTypeOptions: "nosniff",
        ], body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// One page's connection: hello, then its sender task drains its outbox
    /// while this task reads, validates and applies its messages.
    private func serve(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async {
        let id = nextClient.add(1, ordering: .relaxed).newValue
        let outbox = ClientOutbox(counters: counterBox)
        counterBox.update { $0.connections += 1; $0.open += 1 }
        clients.withLock { $0[id] = outbox }
        defer {
            clients.withLock { _ = $0.removeValue(forKey: id) }
            outbox.close()
            counterBox.update { $0.open -= 1 }
        }
        let hello = helloMessage(freshLayout(), rig: hub.rigView)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    try await outbound.write(.text(hello))
                    for await _ in outbox.wakeups {
                        for text in outbox.take() { try await outbound.write(.text(text)) }
                    }
                } catch {}
            }
            var limit = RateLimit(rate: configuration.messagesPerSecond, burst: configuration.burst)
            do {
                for try await message in inbound.messages(maxSize: configuration.maxFrameBytes) {
                    await handle(message, limit: &limit, outbox: outbox)
                }
            } catch {}
            group.cancelAll()
        }
    }

    private func handle(_ message: WebSocketMessage, limit: inout RateLimit, outbox: ClientOutbox) async {
        let result: Result<WebProtocol.Request, WebProtocol.Refusal>
        if !limit.allow() {
            result = .failure(.flood)
        } else if case .text(let text) = message {
            result = WebProtocol.parse(text, maxBytes: configuration.maxMessageBytes, controls: currentLayout().index)
        } else {
            result = .failure(.binary)
        }
        switch result {
        case .failure(let reason):
            counterBox.update { $0.refused[reason, default: 0] += 1 }
            // A flood gets no answer per message: answering would feed it.
            if reason != .flood { outbox.offer(reply: JSON.encode(RefusedMessage(reason: reason.rawValue))) }
        case .success(.ping):
            counterBox.update { $0.accepted += 1 }
            outbox.offer(reply: #"{"type":"pong"}"#)
        case .success(.control(let name, let value)):
            counterBox.update { $0.accepted += 1 }
            hub.setControl(name, to: value)
        case .success(.parameter(let address, let value)):
            counterBox.update { $0.accepted += 1 }
            hub.set(address, to: value)
        case .success(.preset(let channel, let bank, let program)):
            counterBox.update { $0.accepted += 1 }
            // OSC's /carillon/channel/N/preset path: bank select then program change, held notes kept.
            hub.selectPreset(onChannel: channel, bank: bank, program: program)
        case .success(.saveScene(let name)):
            // The page's task waits (its later messages after the save) without holding a thread.
            let hub = self.hub
            let saved = await withCheckedContinuation { (done: CheckedContinuation<Result<Void, SceneSaveError>, Never>) in
                saves.async { done.resume(returning: Result { () throws(SceneSaveError) in _ = try hub.saveScene(named: name) }) }
            }
            switch saved {
            case .success:
                counterBox.update { $0.accepted += 1 }
                outbox.offer(reply: JSON.encode(SavedMessage(scene: name)))
            case .failure(let error):
                counterBox.update { $0.refused[.saveFailed, default: 0] += 1 }
                outbox.offer(reply: JSON.encode(RefusedMessage(reason: WebProtocol.Refusal.saveFailed.rawValue, message: error.description)))
            }
        }
    }

    private func helloMessage(_ layout: Layout, rig: RigView) -> String {
        let sounds = channelSounds()
        var parameters = [ParameterAddress.masterGain]
        if transport != nil { parameters += ParameterAddress.Transport.allCases.map { .transport($0) } }
        return JSON.encode(HelloMessage(
            mapping: hub.mapping?.name, play: transport != nil,
            controls: layout.controls.states.map {
                ControlMessage($0, full: true, steps: layout.steps[$0.name], pad: layout.pads[$0.name])
            },
            groups: layout.groups.map(GroupMessage.init),
            parameters: parameters.map {
                ParameterMessage(address: $0.description, min: $0.spec.range.lowerBound, max: $0.spec.range.upperBound,
                                 unit: $0.spec.unit.rawValue)
            },
            scenes: rig.sceneNames, scene: rig.state.scene, zones: rig.zones.map(ZoneMessage.init),
            fonts: sounds?.fonts, sounds: sounds?.channels, soundsProblem: sounds?.problems.first))
    }

    /// The channel strips: the rig's channels (`ControlHub.soundChannels`), what each plays, their fonts (nil without a font lookup).
    private func channelSounds() -> (fonts: [FontMessage], channels: [ChannelSoundMessage], problems: [String])? {
        guard let fonts else { return nil }
        return ChannelSounds.hello(channels: hub.soundChannels, presets: hub.channelPresets, lookup: fonts)
    }

    // MARK: - Pump

    /// Every `updateInterval`: the controls that changed since the last look go
    /// to every page (all of them in a new `hello` when the hub swapped in
    /// another mapping), and the scene with its zones when it switched; every
    /// `statusInterval`: the status. Only while pages are open.
    private func pump() async {
        var last: [ControlState] = hub.controlStates
        var generation = hub.mappingGeneration
        var rigState = hub.rigState
        var presets = hub.channelPresets.generation
        let statusEvery = max(1, Int(configuration.statusInterval / configuration.updateInterval))
        var tick = 0
        while !Task.isCancelled {
            try? await Task.sleep(for: configuration.updateInterval)
            let outboxes = clients.withLock { Array($0.values) }
            if hub.mappingGeneration != generation {
                let layout = freshLayout()
                generation = layout.controls.generation
                last = layout.controls.states
                let rig = hub.rigView
                rigState = rig.state
                presets = hub.channelPresets.generation
                let hello = helloMessage(layout, rig: rig)
                for o in outboxes { o.offer(hello: hello) }
                continue
            }
            guard !outboxes.isEmpty else { continue }
            if hub.rigState != rigState {
                let rig = hub.rigView
                // Of another mapping than the pages hold: the next tick's hello carries it.
                if rig.state.generation == generation {
                    rigState = rig.state
                    let text = JSON.encode(SceneMessage(rig))
                    for o in outboxes { o.offer(scene: text) }
                }
            }
            if hub.channelPresets.generation != presets {
                presets = hub.channelPresets.generation
                if let sounds = channelSounds() {
                    let text = JSON.encode(SoundsMessage(channels: sounds.channels))
                    for o in outboxes { o.offer(sounds: text) }
                }
            }
            let now = hub.controlStates
            var changed: [(Int, ControlMessage)] = []
            for (i, s) in now.enumerated() where i >= last.count || !Self.sameShown(s, last[i]) {
                changed.append((i, ControlMessage(s, full: false)))
            }
            last = now
            for o in outboxes { o.offer(controls: changed) }
            tick += 1
            if tick % statusEvery == 0 {
                let text = statusMessage()
                for o in outboxes { o.offer(status: text) }
            }
        }
    }

    private static func sameShown(_ a: ControlState, _ b: ControlState) -> Bool {
        a.value == b.value && a.position == b.position && a.display == b.display && a.awaitingPickup == b.awaitingPickup
    }

    private func statusMessage() -> String {
        var m = StatusMessage()
        if let s = status?() {
            func finite(_ x: Double) -> Double? { x.isFinite ? x : nil }
            m.load = finite(s.load); m.xruns = s.xruns; m.blocks = s.blocks; m.voices = s.voices
            if !s.stripPeaks.isEmpty {
                m.strips = s.stripPeaks.map { $0.isFinite ? Double($0) : 0 }
                if s.stripNames.count == s.stripPeaks.count { m.stripNames = s.stripNames }
                if s.stripKeys.count == s.stripPeaks.count { m.stripKeys = s.stripKeys }
            }
            m.peak = finite(Double(s.peak)); m.rms = finite(Double(s.rms))
            if !s.spectrum.isEmpty { m.spectrum = s.spectrum.map { $0.isFinite ? Double($0) : -90 } }
            m.overflows = s.queueOverflows; m.refused = s.refusedParameters
            m.sync = s.sync
            m.audio = s.audio
        }
        if var t = transport?() {
            if !t.position.isFinite { t.position = 0 }
            if !t.duration.isFinite { t.duration = 0 }
            if !t.bpm.isFinite { t.bpm = 0 }
            m.transport = t
        }
        return JSON.encode(m)
    }
}
