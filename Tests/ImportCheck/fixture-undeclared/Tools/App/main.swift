import Mid
import struct Base.Int8Box
@preconcurrency import Atomics; import Dispatch
#if canImport(ArgumentParser)
import ArgumentParser
#endif
// import Undeclared   (a comment is not an import)
/* a block comment
import Undeclared
*/
let source = """
    import Undeclared
    """
print(mid(), "import Undeclared")
