import High

public let low = 1
