import Low

public let high = 2
