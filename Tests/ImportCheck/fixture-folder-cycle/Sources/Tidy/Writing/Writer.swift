public struct Writer { public var size = 0 }
