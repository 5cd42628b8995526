//! Handing a listening socket made inside a run's network namespace to the forgeloop process
//! (design §5.6): the first tier's `"network": "allowlist"` run reaches the egress proxy through
//! a socket forgeloop binds into its namespace, so nothing of the host's network is inside.
//! One descriptor per message, over a Unix socket pair (`SCM_RIGHTS`).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Sends `fd` over the connected Unix socket `channel`.
pub fn send(channel: RawFd, fd: RawFd) -> io::Result<()> {
    let mut byte = [1u8];
    let mut iov = libc::iovec { iov_base: byte.as_mut_ptr().cast(), iov_len: 1 };
    // SAFETY: CMSG_SPACE of one descriptor; the buffer outlives the sendmsg call.
    let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) } as usize;
    let mut control = vec![0u8; space];
    // SAFETY: a zeroed msghdr pointing at our iovec and control buffer.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = space as _;
    // SAFETY: CMSG_FIRSTHDR of a msghdr whose control buffer holds one header; the data written
    // is one descriptor, within CMSG_LEN.
    unsafe {
        let header = libc::CMSG_FIRSTHDR(&msg);
        if header.is_null() {
            return Err(io::Error::other("no room for the descriptor"));
        }
        (*header).cmsg_level = libc::SOL_SOCKET;
        (*header).cmsg_type = libc::SCM_RIGHTS;
        (*header).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(header).cast::<RawFd>(), fd);
        if libc::sendmsg(channel, &msg, libc::MSG_NOSIGNAL) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Receives one descriptor from `channel`; `None` when the other end closed without sending.
pub fn receive(channel: &impl AsRawFd) -> io::Result<Option<OwnedFd>> {
    let mut byte = [0u8];
    let mut iov = libc::iovec { iov_base: byte.as_mut_ptr().cast(), iov_len: 1 };
    // SAFETY: as in `send`.
    let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) } as usize;
    let mut control = vec![0u8; space];
    // SAFETY: a zeroed msghdr pointing at our buffers.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = space as _;
    // SAFETY: recvmsg fills the buffers we own; the descriptor it carries is new and ours.
    unsafe {
        let n = libc::recvmsg(channel.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC);
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        if n == 0 {
            return Ok(None);
        }
        let header = libc::CMSG_FIRSTHDR(&msg);
        if header.is_null() || (*header).cmsg_level != libc::SOL_SOCKET || (*header).cmsg_type != libc::SCM_RIGHTS {
            return Ok(None);
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(header).cast::<RawFd>());
        Ok(Some(OwnedFd::from_raw_fd(fd)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listener_crosses_the_pair_and_still_listens() {
        let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        send(theirs.as_raw_fd(), listener.as_raw_fd()).unwrap();
        drop(listener);
        let got = std::net::TcpListener::from(receive(&ours).unwrap().unwrap());
        assert_eq!(got.local_addr().unwrap(), addr);
        let _client = std::net::TcpStream::connect(addr).unwrap();
        assert!(got.accept().is_ok());
        drop(theirs);
        assert!(receive(&ours).unwrap().is_none(), "a closed pair sends nothing");
    }
}
