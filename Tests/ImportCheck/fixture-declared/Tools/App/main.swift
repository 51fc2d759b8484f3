import Mid
import struct Base.Int8Box
@preconcurrency import Atomics; import Dispatch
// import Undeclared   (a comment is not an import)
/* a block comment
import Undeclared
   /* nested */ import Undeclared
*/
let source = """
    import Undeclared
    """
let raw = #"""
    import Undeclared "\(x)"
    """#
print(mid(), "import Undeclared")
