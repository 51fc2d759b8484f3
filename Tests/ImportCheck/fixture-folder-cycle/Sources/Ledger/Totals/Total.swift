// Totals → Entries by the type's name.
extension Entry {
    var doubled: Int { amount * 2 }
    var count: Int { 1 }
}

public struct Total {
    var count = 0
}
