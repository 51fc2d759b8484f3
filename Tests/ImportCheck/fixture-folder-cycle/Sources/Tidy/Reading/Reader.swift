public struct Reader { public var writer: Writer? }
