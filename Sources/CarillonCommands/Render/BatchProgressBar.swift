import OfflineRender
import RenderBatch
#if canImport(Glibc)
import Glibc
#endif

/// The overall bar of a batch on stderr (a terminal only): files done of
/// the total, failures, aggregate speed in × real time, and the ETA.
final class BatchProgressBar {
    private var drawn = false

    func show(_ s: BatchRenderer.Snapshot) {
        let fraction = s.total > 0 ? min(1, s.filesProgress / Double(s.total)) : 1
        let failed = s.failed > 0 ? ", \(s.failed) failed" : ""
        let eta = s.eta.map { "ETA \(clock($0))" } ?? "ETA --"
        write("\r\u{1B}[2K\(progressBar(fraction)) \(s.done)/\(s.total) files\(failed) \(realTime(s.speed)) \(eta)")
        drawn = true
    }

    func clear() {
        guard drawn else { return }
        write("\r\u{1B}[2K")
        drawn = false
    }

    private func write(_ text: String) {
        var text = text
        text.withUTF8 { _ = Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}
