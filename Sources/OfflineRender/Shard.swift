/// One of `count` disjoint parts of a batch, for running the same command on
/// many machines (a Slurm array task, a Kubernetes Indexed Job pod): shard
/// `index` takes the files whose key hashes to it. The key is the file's path
/// relative to the batch's root (`BatchPlan.gather`: `--input-root`, or the
/// folder every input is under), the same for a file walked in a folder and
/// for one listed, so the split does not depend on how the corpus was named,
/// on the order of the list, on where the corpus is mounted, or on the
/// process (FNV-1a, not Swift's per-process seeded `Hasher`).
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

    /// The shard of this Slurm array task: K = SLURM_ARRAY_TASK_ID −
    /// SLURM_ARRAY_TASK_MIN, N = SLURM_ARRAY_TASK_COUNT, so `--array=0-15`
    /// and `--array=1-16` both make shards 0/16 … 15/16 (a `%` throttle is
    /// fine). An array whose task IDs have gaps (a step, `0-30:2`, or a list,
    /// `1,3,7`) is refused: its IDs do not number the shards.
    public static func slurm(environment: [String: String]) throws(ShardError) -> Shard {
        func number(_ name: String) throws(ShardError) -> Int {
            guard let text = environment[name] else { throw .notASlurmArrayTask(missing: name) }
            guard let value = Int(text) else { throw .badSlurmVariable(name: name, value: text) }
            return value
        }
        let id = try number("SLURM_ARRAY_TASK_ID")
        let min = try number("SLURM_ARRAY_TASK_MIN"), max = try number("SLURM_ARRAY_TASK_MAX")
        let count = try number("SLURM_ARRAY_TASK_COUNT")
        guard count > 0, max - min + 1 == count, (min...max).contains(id) else {
            throw .slurmArrayWithGaps(count: count, min: min, max: max)
        }
        return Shard(index: id - min, count: count)!
    }

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

public enum ShardError: Error, Equatable, CustomStringConvertible {
    case notASlurmArrayTask(missing: String)
    case badSlurmVariable(name: String, value: String)
    case slurmArrayWithGaps(count: Int, min: Int, max: Int)

    public var description: String {
        switch self {
        case .notASlurmArrayTask(let name):
            "--shard slurm: \(name) is not set: not a Slurm array task (submit with sbatch --array=0-15, one task per shard)"
        case .badSlurmVariable(let name, let value):
            "--shard slurm: \(name) is '\(value)', not a number"
        case .slurmArrayWithGaps(let count, let min, let max):
            "--shard slurm: the array's task IDs must be consecutive, one per shard (--array=0-\(count - 1) or "
                + "--array=1-\(count), optionally with %M to run at most M at once); this array has \(count) tasks "
                + "numbered \(min) to \(max), with gaps (a step such as 0-30:2 or a list such as 1,3,7)"
        }
    }
}
