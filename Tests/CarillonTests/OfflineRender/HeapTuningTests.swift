import Glibc
import Testing
import Threads

/// glibc's heap as a render sets it (`HeapTuning`): checked on this test
/// process's own heap, through glibc's counters.
@Suite(.serialized) struct HeapTuningTests {
    /// After `forRender`, a 256 KiB block still gets pages of its own after a
    /// 4 MiB one was freed (glibc's default would have raised its threshold
    /// to 4 MiB and put the block in the heap).
    @Test func mmapThresholdStaysFixed() throws {
        try HeapTuning.forRender(workers: 1)
        let big = try #require(malloc(4 << 20))
        memset(big, 1, 4 << 20)
        // Written out, so an optimizing build cannot drop the block.
        let devNull = open("/dev/null", O_WRONLY)
        defer { close(devNull) }
        #expect(write(devNull, big, 4 << 20) == 4 << 20)
        free(big)
        let block = try #require(malloc(256 << 10))
        defer { free(block) }
        #expect(Self.isMmapped(block))
        let small = try #require(malloc(1_000))
        defer { free(small) }
        #expect(!Self.isMmapped(small))
    }

    /// glibc's chunk header, the word before the block: its size with the
    /// IS_MMAPPED bit (2) set for a block on pages of its own (malloc.c).
    static func isMmapped(_ block: UnsafeMutableRawPointer) -> Bool {
        (block - MemoryLayout<Int>.size).load(as: Int.self) & 2 != 0
    }

    /// Freed small blocks below one still held are pages the heap keeps; `returnFreePages` gives them back.
    @Test func freedPagesReturn() throws {
        try HeapTuning.forRender(workers: 1)
        var blocks: [UnsafeMutableRawPointer] = []
        for _ in 0..<4_000 {
            let b = try #require(malloc(1_000))
            memset(b, 1, 1_000)
            blocks.append(b)
        }
        let kept = try #require(malloc(1_000))
        defer { free(kept) }
        for b in blocks { free(b) }
        #expect(HeapTuning.returnFreePages())
    }

    @Test func refusedSettingIsNamed() {
        let error = HeapTuningError(setting: "M_ARENA_MAX", value: -1)
        #expect("\(error)" == "glibc refused mallopt(M_ARENA_MAX, -1); the heap keeps its defaults")
    }
}
