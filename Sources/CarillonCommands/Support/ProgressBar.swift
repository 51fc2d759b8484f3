import OfflineRender
#if canImport(Glibc)
import Glibc
#endif

/// A one-line progress bar on stderr (a terminal only), redrawn at most 10 times a second.
final class ProgressBar {
    let label: String
    private var lastDraw = -1.0

    init(label: String) { self.label = label }

    func show(_ p: RenderJob.Progress) {
        guard p.elapsed - lastDraw >= 0.1 else { return }
        lastDraw = p.elapsed
        let fraction = p.pieceDuration > 0 ? min(1, p.rendered / p.pieceDuration) : 1
        let speed = p.elapsed > 0 ? p.rendered / p.elapsed : 0
        let eta = speed > 0 ? max(0, p.pieceDuration - p.rendered) / speed : 0
        let status = p.inTail ? "tail" : "ETA \(clock(eta))"
        write("\r\u{1B}[2K\(label) \(progressBar(fraction)) \(Int(fraction * 100))% \(realTime(speed)) \(status)")
    }

    func clear() { write("\r\u{1B}[2K") }

    private func write(_ text: String) {
        var text = text
        text.withUTF8 { _ = Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}
