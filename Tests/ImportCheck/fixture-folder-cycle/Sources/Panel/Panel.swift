// At the target's top: the entry, in no folder, free to use every folder.
public let panel = (Hub(), Mapping(), Shape.line)
