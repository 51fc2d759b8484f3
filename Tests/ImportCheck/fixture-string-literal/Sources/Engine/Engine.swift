// A string literal on a line of its own, then an import further down: the
// tokenizer must go on from the literal's end, not skip as far again.
public let greeting = "a string literal with an \"escaped\" quote"

import Foundation

public let engine = 1
