// libxcb and its XFixes extension, seen from Swift (the X11 side of the desktop bridge).
#ifndef PASTEBOARDD_CXCB_SHIM_H
#define PASTEBOARDD_CXCB_SHIM_H

#include <xcb/xcb.h>
#include <xcb/xfixes.h>

// The extension's id is a mutable C global, which Swift 6 will not touch from a nonisolated
// context: hand out its address instead.
static inline xcb_extension_t *cxcb_xfixes_extension(void) {
    return &xcb_xfixes_id;
}

#endif
