// What Swift cannot import from libdbus and glibc by itself.
#ifndef PASTEBOARDD_CDBUS_SHIM_H
#define PASTEBOARDD_CDBUS_SHIM_H

#include <dbus/dbus.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

// glibc declares these only under _GNU_SOURCE, which Swift's Glibc module does not set.
int memfd_create(const char *name, unsigned int flags);
int pipe2(int pipefd[2], int flags);
ssize_t splice(int fd_in, long long *off_in, int fd_out, long long *off_out, size_t len, unsigned int flags);
ssize_t copy_file_range(int fd_in, long long *off_in, int fd_out, long long *off_out, size_t len, unsigned int flags);

// Names the calling thread (up to 15 bytes), as `ps -L` and /proc/self/task/*/comm show it;
// prctl is variadic, which Swift cannot call.
static inline int cdbus_name_this_thread(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}

#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 0x0001U
#endif
#ifndef MFD_ALLOW_SEALING
#define MFD_ALLOW_SEALING 0x0002U
#endif

static const unsigned int cdbus_MFD_CLOEXEC = 0x0001U;
static const unsigned int cdbus_MFD_ALLOW_SEALING = 0x0002U;
static const int cdbus_F_ADD_SEALS = 1024 + 9;
static const int cdbus_F_SEAL_SEAL = 0x0001;
static const int cdbus_F_SEAL_SHRINK = 0x0002;
static const int cdbus_F_SEAL_GROW = 0x0004;
static const int cdbus_F_SEAL_WRITE = 0x0008;
static const int cdbus_F_SETPIPE_SZ = 1024 + 7;
static const int cdbus_F_GETPIPE_SZ = 1024 + 8;
// O_TMPFILE (__O_TMPFILE | O_DIRECTORY) and AT_SYMLINK_FOLLOW, which glibc hides without _GNU_SOURCE.
static const int cdbus_O_TMPFILE = 020200000;
static const int cdbus_AT_SYMLINK_FOLLOW = 0x400;

// Reusing a spare blob file: a write lease proves nobody else has it open; renameat2 names it
// without replacing another file. Both hidden without _GNU_SOURCE.
static const int cdbus_F_SETLEASE = 1024 + 0;
int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags);
static const unsigned int cdbus_RENAME_NOREPLACE = 1;

// Preallocating a blob file: fcntl.h declares fallocate only under _GNU_SOURCE.
int fallocate(int fd, int mode, off_t offset, off_t len);
static const int cdbus_FALLOC_FL_KEEP_SIZE = 0x01;

// fcntl is variadic in C; these fixed-arity wrappers are callable from Swift.
static inline int cdbus_fcntl_int(int fd, int cmd, int arg) { return fcntl(fd, cmd, arg); }
static inline int cdbus_fcntl(int fd, int cmd) { return fcntl(fd, cmd); }
// ioctl is variadic, which Swift cannot call.
static inline int cdbus_ioctl_int_pointer(int fd, unsigned long request, int *value) { return ioctl(fd, request, value); }
static const unsigned long cdbus_FIONREAD = FIONREAD;
// <fcntl.h> declares the splice flags only under _GNU_SOURCE.
static const unsigned int cdbus_SPLICE_F_NONBLOCK = 0x02;

// The pipelined bus handshake (DBus's PipelinedHandshake): dup3 and accept4 are declared only
// under _GNU_SOURCE, and so is struct ucred: who connected to the stand-in, who runs the bus.
int dup3(int oldfd, int newfd, int flags);
int accept4(int sockfd, struct sockaddr *addr, socklen_t *addrlen, int flags);
struct cdbus_ucred { pid_t pid; uid_t uid; gid_t gid; };
static inline int cdbus_peer_credentials(int fd, struct cdbus_ucred *credentials) {
    socklen_t length = sizeof *credentials;
    return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, credentials, &length) == 0 && length == sizeof *credentials;
}
static inline pid_t cdbus_peer_pid(int fd) {
    struct cdbus_ucred credentials;
    return cdbus_peer_credentials(fd, &credentials) ? credentials.pid : -1;
}
// The user on the other end of a unix socket; (uid_t)-1 when unknown.
static inline uid_t cdbus_peer_uid(int fd) {
    struct cdbus_ucred credentials;
    return cdbus_peer_credentials(fd, &credentials) ? credentials.uid : (uid_t)-1;
}

#endif
