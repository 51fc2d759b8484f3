import ArgumentParser
import OfflineRender
import RenderBatch
#if canImport(Glibc)
import Glibc
#endif

/// The batch's inputs from the command line: file and folder arguments and
/// `--from-list` (a file, or `-` for standard input), one path a line, all
/// keyed against one root (`--input-root`, or the folder they share).
enum BatchInputs {
    static func gather(arguments: [String], list: String?, root: String?) throws -> [(input: String, key: String)] {
        var names = arguments
        if let list { names += BatchPlan.listLines(try readAll(list)) }
        return try BatchPlan.gather(names, root: root)
    }

    static func readAll(_ path: String) throws -> String {
        let fd = path == "-" ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw BatchPlanError.cannotRead(path: path, reason: String(cString: strerror(errno))) }
        defer { if fd != STDIN_FILENO { close(fd) } }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw BatchPlanError.cannotRead(path: path == "-" ? "standard input" : path, reason: String(cString: strerror(errno)))
            }
            if n == 0 { break }
            bytes += chunk[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

}
