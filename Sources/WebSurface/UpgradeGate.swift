import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1

/// The server's connections: Hummingbird's HTTP/1 with WebSocket upgrade, with
/// `UpgradeGate` in front of its upgrade handler.
///
/// Why: hummingbird-websocket (2.8) answers every refused upgrade — a
/// `.dontUpgrade` from `shouldUpgrade`, or an error thrown there — with an empty
/// 400 and closes, as if the request were malformed. A missing token is a 401 and
/// a foreign Origin a 403, with the reason in the body; so the gate answers those
/// itself, before Hummingbird's handler sees the request.
struct GatedUpgradeChannel: ServerChildChannel {
    typealias Value = HTTP1WebSocketUpgradeChannel.Value
    let inner: HTTP1WebSocketUpgradeChannel
    let gate: Gate

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let pipeline = channel.pipeline.syncOperations
            let upgrader = try pipeline.handler(type: NIOTypedHTTPServerUpgradeHandler<HTTP1WebSocketUpgradeChannel.UpgradeResult>.self)
            try pipeline.addHandler(UpgradeGate(gate: gate), position: .before(upgrader))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

/// Sees a connection's first request (the only one an upgrade can come in):
/// a WebSocket upgrade the gate refuses gets 401 or 403 with a one-line reason
/// and the connection closes; anything else passes on, and the handler leaves
/// the pipeline (after an upgrade, WebSocket frames come, not HTTP).
final class UpgradeGate: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let gate: Gate
    private var refused = false

    init(gate: Gate) { self.gate = gate }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // The refused request's body and end: dropped, the answer is on its way.
        guard !refused else { return }
        guard case .head(let head) = unwrapInboundIn(data),
              head.headers[canonicalForm: "upgrade"].contains(where: { $0.lowercased() == "websocket" }),
              let refusal = gate.check(Self.fields(head), webSocket: true)
        else {
            context.fireChannelRead(data)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            return
        }
        refused = true
        let body = context.channel.allocator.buffer(string: refusal.reason + "\n")
        var headers = HTTPHeaders([("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", "\(body.readableBytes)"),
                                   ("Connection", "close"), ("Cache-Control", "no-store")])
        if refusal == .unauthorized { headers.add(name: "WWW-Authenticate", value: "Bearer") }
        let status: HTTPResponseStatus = refusal == .unauthorized ? .unauthorized : .forbidden
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in context.close(promise: nil) }
    }

    static func fields(_ head: HTTPRequestHead) -> Gate.Fields {
        Gate.Fields(authority: head.headers.first(name: "host") ?? "",
                    queryToken: URI(head.uri).queryParameters["token"].map(String.init),
                    authorization: head.headers.first(name: "authorization"),
                    origin: head.headers.first(name: "origin"))
    }
}
