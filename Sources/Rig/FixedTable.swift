/// Fixed-size storage the router reads and writes on the input thread. A
/// write is a plain store through a pointer: an `Array` stored in a class is
/// written through a `_modify` coroutine, whose frame an unoptimised (debug)
/// build allocates on the heap at every write. Owned by one object, which
/// calls `release` in its `deinit`.
struct FixedTable<Element> {
    private let base: UnsafeMutablePointer<Element>
    let count: Int

    init(repeating value: Element, count: Int) {
        base = .allocate(capacity: count)
        base.initialize(repeating: value, count: count)
        self.count = count
    }

    subscript(index: Int) -> Element {
        get { base[index] }
        nonmutating set { base[index] = newValue }
    }

    func release() {
        base.deinitialize(count: count)
        base.deallocate()
    }
}
