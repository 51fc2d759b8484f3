public struct Writer { public var size = 0 }

struct Page {
    var length = 0
    func fits(_ other: Page) -> Bool { other.length <= length }
}
