public struct Entry {
    public var amount = 0
}

/// Entries → Totals, only through a member Totals' extension adds (`doubled`); `count` is
/// declared more than once in the target, so it is no evidence either way.
func report(_ entry: Entry) -> Int { entry.doubled + [entry].count }
