/// One of `count` disjoint parts of a batch, for running the same command on
/// many machines (a Slurm array task, a Kubernetes Indexed Job pod): shard
/// `index` takes the files whose key hashes to it. The key is the file's path
/// relative to the folder argument it was found in (its name for a file
/// given directly), so the split does not depend on the order of the list,
/// on where the corpus is mounted, or on the process (FNV-1a, not Swift's
/// per-process seeded `Hasher`).
public struct Shard: Sendable, Equatable, CustomStringConvertible {
    public let index: Int
    public let count: Int

    public init?(index: Int, count: Int) {
        guard count > 0, (0..<count).contains(index) else { return nil }
        self.index = index; self.count = count
    }

    /// "K/N" with 0 ≤ K < N.
    public init?(parsing text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let k = Int(parts[0]), let n = Int(parts[1]) else { return nil }
        self.init(index: k, count: n)
    }

    public var description: String { "\(index)/\(count)" }

    public func contains(key: String) -> Bool {
        Self.fnv1a64(key) % UInt64(count) == UInt64(index)
    }

    /// 64-bit FNV-1a of the UTF-8 bytes.
    public static func fnv1a64(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return hash
    }
}
