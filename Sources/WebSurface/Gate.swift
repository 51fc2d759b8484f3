import Foundation
import Hummingbird

/// The checks every HTTP request and WebSocket upgrade passes before anything
/// else: the token (when there is one), the Host (loopback names only when
/// there is no token: a rebinding DNS name pointing at 127.0.0.1 must not
/// reach the surface), and for `/ws` the Origin (a page from another site may
/// not open a WebSocket here: cross-site WebSocket hijacking).
struct Gate: Sendable {
    let configuration: WebSurfaceConfiguration
    let counters: CounterBox

    enum Refusal: Equatable {
        case unauthorized, forbidden(String)

        /// The one line a refused WebSocket upgrade's body holds.
        var reason: String {
            switch self {
            case .unauthorized: "unauthorized: missing or wrong token (give ?token=… or Authorization: Bearer …)"
            case .forbidden(let why): "forbidden: \(why)"
            }
        }
    }

    /// What of a request the checks read.
    struct Fields {
        var authority: String
        /// `?token=` of the query.
        var queryToken: String?
        var authorization: String?
        var origin: String?
    }

    /// Nil: allowed. `count`: record a refusal in the counters (once per request).
    func check(_ request: Request, webSocket: Bool, count: Bool = true) -> Refusal? {
        check(Fields(authority: request.head.authority ?? "", queryToken: request.uri.queryParameters["token"].map(String.init),
                     authorization: request.headers[.authorization], origin: request.headers[.origin]),
              webSocket: webSocket, count: count)
    }

    func check(_ fields: Fields, webSocket: Bool, count: Bool = true) -> Refusal? {
        let refusal = evaluate(fields, webSocket: webSocket)
        if count, let refusal {
            counters.update { if refusal == .unauthorized { $0.unauthorized += 1 } else { $0.forbidden += 1 } }
        }
        return refusal
    }

    private func evaluate(_ request: Fields, webSocket: Bool) -> Refusal? {
        let authority = request.authority
        if let token = configuration.token {
            let given = request.queryToken
                ?? request.authorization.flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
            guard let given, Self.constantTimeEqual(given, token) else { return .unauthorized }
        } else if !WebSurfaceConfiguration.isLoopback(Self.hostName(authority)) {
            return .forbidden("host '\(authority)' is not a loopback name")
        }
        // Browsers always send Origin on a WebSocket upgrade; scripts need not.
        if webSocket, let origin = request.origin {
            guard origin.lowercased() == "http://" + authority.lowercased() else {
                return .forbidden("origin '\(origin)' is not this page's")
            }
        }
        return nil
    }

    /// `host:port`, `[::1]:port` → the host.
    static func hostName(_ authority: String) -> String {
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            return String(authority[authority.index(after: authority.startIndex)..<close])
        }
        return String(authority.split(separator: ":", maxSplits: 1).first ?? "")
    }

    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var diff: UInt8 = 0
        for i in x.indices { diff |= x[i] ^ y[i] }
        return diff == 0
    }
}

struct GateMiddleware<Context: RequestContext>: RouterMiddleware {
    let gate: Gate

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        switch gate.check(request, webSocket: request.uri.path == "/ws") {
        case nil:
            return try await next(request, context)
        case .unauthorized:
            // The page asks for the token (a person opened the address without it).
            return WebSurface.htmlResponse(Page.tokenForm, status: .unauthorized)
        case .forbidden(let why):
            return Response(status: .forbidden, headers: [.contentType: "text/plain; charset=utf-8"],
                            body: .init(byteBuffer: ByteBuffer(string: "forbidden: \(why)\n")))
        }
    }
}
