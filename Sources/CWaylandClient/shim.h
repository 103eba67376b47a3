// libwayland-client, seen from Swift (the Wayland side of the desktop bridge).
#ifndef PASTEBOARDD_CWAYLANDCLIENT_SHIM_H
#define PASTEBOARDD_CWAYLANDCLIENT_SHIM_H

#include <wayland-client-core.h>
#include <wayland-client-protocol.h>

#endif
