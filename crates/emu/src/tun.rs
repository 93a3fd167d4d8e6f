//! Opening a Linux TUN device (Documentation/networking/tuntap.rst): open /dev/net/tun and
//! attach it to an interface with the TUNSETIFF ioctl, IFF_TUN | IFF_NO_PI (raw IP packets, no
//! packet-information header). The ioctl is the crate's only unsafe call.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;

/// _IOW('T', 202, int) (linux/if_tun.h).
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;
/// IFNAMSIZ (linux/if.h), terminating NUL included.
const IFNAMSIZ: usize = 16;

/// `struct ifreq` as TUNSETIFF reads it: the name, the flags, and the rest of the union.
#[repr(C)]
struct IfReq {
    name: [u8; IFNAMSIZ],
    flags: libc::c_short,
    _union_rest: [u8; 22],
}

/// Opens the TUN interface `name` (created if absent, in the calling thread's network
/// namespace), reading and writing whole IPv4/IPv6 packets.
pub fn open(name: &str) -> io::Result<File> {
    if name.is_empty() || name.len() >= IFNAMSIZ || !name.is_ascii() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("TUN name {name:?} must be 1 to 15 ASCII characters")));
    }
    let file = OpenOptions::new().read(true).write(true).open("/dev/net/tun")?;
    let mut request = IfReq { name: [0; IFNAMSIZ], flags: IFF_TUN | IFF_NO_PI, _union_rest: [0; 22] };
    request.name[..name.len()].copy_from_slice(name.as_bytes());
    set_interface(&file, &mut request)?;
    Ok(file)
}

#[allow(unsafe_code)]
fn set_interface(file: &File, request: &mut IfReq) -> io::Result<()> {
    // SAFETY: `file` is an open /dev/net/tun descriptor and `request` a live, properly laid out
    // `struct ifreq` that the kernel reads (and may write its name back into) during the call.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), TUNSETIFF as _, request as *mut IfReq) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
