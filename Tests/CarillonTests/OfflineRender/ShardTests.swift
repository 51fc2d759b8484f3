import OfflineRender
import Testing

/// `--shard slurm`: the shard from a Slurm array task's environment.
@Suite struct ShardTests {
    static func slurm(id: Int, min: Int, max: Int, count: Int) -> [String: String] {
        ["SLURM_ARRAY_TASK_ID": "\(id)", "SLURM_ARRAY_TASK_MIN": "\(min)", "SLURM_ARRAY_TASK_MAX": "\(max)",
         "SLURM_ARRAY_TASK_COUNT": "\(count)"]
    }

    @Test func slurmShard_isTheTaskIDLessTheArraysFirst_ofItsCount() throws {
        #expect(try Shard.slurm(environment: Self.slurm(id: 0, min: 0, max: 15, count: 16)) == Shard(index: 0, count: 16))
        #expect(try Shard.slurm(environment: Self.slurm(id: 15, min: 0, max: 15, count: 16)) == Shard(index: 15, count: 16))
        // --array=1-3: tasks 1, 2, 3 are shards 0, 1, 2 of 3.
        for id in 1...3 {
            #expect(try Shard.slurm(environment: Self.slurm(id: id, min: 1, max: 3, count: 3)) == Shard(index: id - 1, count: 3))
        }
        #expect(try Shard.slurm(environment: Self.slurm(id: 7, min: 7, max: 7, count: 1)) == Shard(index: 0, count: 1))
    }

    @Test func slurmShard_anArrayWithGaps_isRefused_sayingHowToWriteIt() {
        // --array=0-30:2 (16 tasks) and --array=1,3,7 (3 tasks).
        for (id, min, max, count) in [(4, 0, 30, 16), (3, 1, 7, 3)] {
            #expect(throws: ShardError.slurmArrayWithGaps(count: count, min: min, max: max)) {
                _ = try Shard.slurm(environment: Self.slurm(id: id, min: min, max: max, count: count))
            }
        }
        let message = ShardError.slurmArrayWithGaps(count: 3, min: 1, max: 7).description
        #expect(message.contains("--array=0-2") && message.contains("--array=1-3"), "\(message)")
    }

    @Test func slurmShard_outsideAnArrayTask_isRefused() {
        var environment = Self.slurm(id: 1, min: 0, max: 3, count: 4)
        environment["SLURM_ARRAY_TASK_MIN"] = nil
        #expect(throws: ShardError.notASlurmArrayTask(missing: "SLURM_ARRAY_TASK_MIN")) {
            _ = try Shard.slurm(environment: environment)
        }
        #expect(throws: ShardError.notASlurmArrayTask(missing: "SLURM_ARRAY_TASK_ID")) { _ = try Shard.slurm(environment: [:]) }
        environment["SLURM_ARRAY_TASK_MIN"] = "x"
        #expect(throws: ShardError.badSlurmVariable(name: "SLURM_ARRAY_TASK_MIN", value: "x")) {
            _ = try Shard.slurm(environment: environment)
        }
    }
}
