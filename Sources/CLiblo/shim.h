// liblo (Debian's liblo-dev): OSC packets parsed and built by the library; Carillon
// reads its own socket and hands each datagram to lo_server_dispatch_data.
#include <lo/lo.h>
