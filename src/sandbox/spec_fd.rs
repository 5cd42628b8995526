//! Handing the helper its spec (design §5.6) on a descriptor instead of its command line, which
//! every local account can read in `/proc/<pid>/cmdline`: the spec holds the command's whole
//! environment (a passed-through `DATABASE_URL` with its password, say). The spec is written
//! into a memory file, sealed against change, and inherited by the helper alone.

use std::io::{self, Seek, SeekFrom, Write};
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

/// A sealed, close-on-exec memory file holding `bytes`, positioned at its start.
pub fn sealed(bytes: &[u8]) -> io::Result<OwnedFd> {
    // SAFETY: memfd_create reads the NUL-terminated name; the result is a new descriptor we own.
    let fd = unsafe { libc::memfd_create(c"forgeloop-spec".as_ptr(), libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd was just created and is owned by nothing else.
    let mut file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    file.write_all(bytes)?;
    let seals = libc::F_SEAL_SEAL | libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_WRITE;
    // SAFETY: fcntl on the descriptor we own.
    if unsafe { libc::fcntl(fd, libc::F_ADD_SEALS, seals) } != 0 {
        return Err(io::Error::last_os_error());
    }
    file.seek(SeekFrom::Start(0))?;
    Ok(OwnedFd::from(file))
}

/// In the child, between fork and exec: lets `fd` survive the exec (it is the helper's).
pub fn inherit(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl is async-signal-safe and touches only the descriptor table.
    if unsafe { libc::fcntl(fd, libc::F_SETFD, 0) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
