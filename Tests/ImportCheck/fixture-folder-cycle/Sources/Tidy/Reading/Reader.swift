public struct Reader { public var writer: Writer? }

extension Writer {
    /// Declared here and in Writing's `Page`: `page.length` there is no use of Reading.
    var length: Int { size }
}
