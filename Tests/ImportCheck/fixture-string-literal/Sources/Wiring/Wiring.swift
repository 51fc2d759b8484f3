import Engine

// Nothing here is an import: the text is inside literals and comments.
let raw = #"""
import Undeclared
"""#
let interpolated = "\(engine) \("import Undeclared2")"
/* import Undeclared3 /* nested */
import Undeclared4 */
let wiring = "x"; import Missing
