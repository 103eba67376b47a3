/// libdbus's static archive refers to two libsystemd functions, used only to accept the sockets
/// systemd passes to a bus *daemon* (`systemd:` listen addresses). pbctl is linked statically
/// (see Package.swift) and there is no static libsystemd, so these stand in: a client never
/// listens, and with them it does not load libsystemd and its six dependencies either.
///
/// They answer as libsystemd does when not started by systemd: no sockets passed.
@_cdecl("sd_listen_fds")
func sdListenFDs(_ unsetEnvironment: Int32) -> Int32 {
    0
}

/// See ``sdListenFDs(_:)``; never reached, since no descriptor is ever passed.
@_cdecl("sd_is_socket")
func sdIsSocket(_ fd: Int32, _ family: Int32, _ type: Int32, _ listening: Int32) -> Int32 {
    -38  // -ENOSYS
}
