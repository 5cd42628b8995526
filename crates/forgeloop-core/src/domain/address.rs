//! The class of an IP address: public, or one of the kinds no request from outside should
//! make this machine reach (loopback, private networks, link-local and the cloud metadata
//! endpoint, ...). Both doors to the network decide with it: the egress proxy of test runs
//! (`domain::egress`) and the connector's fetch of a client's metadata document
//! (`domain::client_document`).

use core::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// What kind of address a destination is; only [`AddrClass::Public`] is reachable without an
/// exact `IP:port` entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddrClass {
    /// Globally routable.
    Public,
    /// `127.0.0.0/8`, `::1`: this machine.
    Loopback,
    /// RFC 1918 (IPv4), RFC 4193 unique local `fc00::/7` and the deprecated site-local
    /// `fec0::/10` (IPv6).
    Private,
    /// `169.254.0.0/16` (the cloud metadata endpoint `169.254.169.254` among them), `fe80::/10`.
    LinkLocal,
    /// RFC 6598 shared address space `100.64.0.0/10`, carrier-grade NAT.
    Cgnat,
    /// `224.0.0.0/4`, `ff00::/8`.
    Multicast,
    /// `0.0.0.0`, `::` (the kernel reads them as this host).
    Unspecified,
    /// `255.255.255.255`.
    Broadcast,
    /// `192.0.2.0/24`, `198.51.100.0/24`, `203.0.113.0/24`, `2001:db8::/32`, `3fff::/20`.
    Documentation,
    /// Everything else that is not globally routable: `0.0.0.0/8`, `192.0.0.0/24`, benchmarking
    /// `198.18.0.0/15`, `240.0.0.0/4`, the deprecated 6to4 relay prefix, IPv6 outside
    /// `2000::/3`, the IETF protocol assignments `2001::/23` (Teredo among them).
    Reserved,
}

/// The class of `ip`. IPv4-mapped (`::ffff:a.b.c.d`), NAT64 (`64:ff9b::/96`) and 6to4
/// (`2002::/16`) addresses are classified by the IPv4 address they carry.
pub fn classify(ip: IpAddr) -> AddrClass {
    match ip.to_canonical() {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> AddrClass {
    let [a, b, c, _] = ip.octets();
    match (a, b, c) {
        _ if ip.is_unspecified() => AddrClass::Unspecified,
        _ if ip.is_broadcast() => AddrClass::Broadcast,
        (0, _, _) => AddrClass::Reserved,
        (127, _, _) => AddrClass::Loopback,
        (10, _, _) | (172, 16..=31, _) | (192, 168, _) => AddrClass::Private,
        (100, 64..=127, _) => AddrClass::Cgnat,
        (169, 254, _) => AddrClass::LinkLocal,
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => AddrClass::Documentation,
        (192, 0, 0) | (192, 88, 99) | (198, 18..=19, _) => AddrClass::Reserved,
        (224..=239, _, _) => AddrClass::Multicast,
        (240..=255, _, _) => AddrClass::Reserved,
        _ => AddrClass::Public,
    }
}

fn classify_v6(ip: Ipv6Addr) -> AddrClass {
    let s = ip.segments();
    let embedded = |hi: u16, lo: u16| Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8);
    if ip.is_unspecified() {
        AddrClass::Unspecified
    } else if ip.is_loopback() {
        AddrClass::Loopback
    } else if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
        classify_v4(embedded(s[6], s[7]))
    } else if s[0] == 0x2002 {
        classify_v4(embedded(s[1], s[2]))
    } else if s[0] & 0xfe00 == 0xfc00 || s[0] & 0xffc0 == 0xfec0 {
        AddrClass::Private
    } else if s[0] & 0xffc0 == 0xfe80 {
        AddrClass::LinkLocal
    } else if s[0] & 0xff00 == 0xff00 {
        AddrClass::Multicast
    } else if (s[0] == 0x2001 && s[1] == 0x0db8) || (s[0] == 0x3fff && s[1] & 0xf000 == 0) {
        AddrClass::Documentation
    } else if s[0] & 0xe000 != 0x2000 || (s[0] == 0x2001 && s[1] < 0x0200) {
        AddrClass::Reserved
    } else {
        AddrClass::Public
    }
}

/// How a refusal names the class of `ip`.
pub fn describe(ip: IpAddr) -> &'static str {
    let ip = ip.to_canonical();
    let metadata = ip == IpAddr::V4(Ipv4Addr::new(169, 254, 169, 254))
        || ip == IpAddr::V6(Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254));
    if metadata {
        return "link-local (cloud metadata)";
    }
    match (classify(ip), ip) {
        (AddrClass::Public, _) => "public",
        (AddrClass::Loopback, _) => "loopback",
        (AddrClass::Private, IpAddr::V4(_)) => "private (RFC 1918)",
        (AddrClass::Private, IpAddr::V6(_)) => "private (RFC 4193 unique local)",
        (AddrClass::LinkLocal, _) => "link-local",
        (AddrClass::Cgnat, _) => "shared address space (CGNAT, RFC 6598)",
        (AddrClass::Multicast, _) => "multicast",
        (AddrClass::Unspecified, _) => "unspecified (this host)",
        (AddrClass::Broadcast, _) => "broadcast",
        (AddrClass::Documentation, _) => "a documentation address",
        (AddrClass::Reserved, _) => "reserved (not globally routable)",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn addresses_are_classified() {
        let cases = [
            ("1.1.1.1", AddrClass::Public),
            ("151.101.0.223", AddrClass::Public),
            ("0.0.0.0", AddrClass::Unspecified),
            ("0.1.2.3", AddrClass::Reserved),
            ("127.0.0.1", AddrClass::Loopback),
            ("127.255.255.254", AddrClass::Loopback),
            ("10.0.4.7", AddrClass::Private),
            ("172.16.0.1", AddrClass::Private),
            ("172.31.255.255", AddrClass::Private),
            ("172.32.0.1", AddrClass::Public),
            ("192.168.1.1", AddrClass::Private),
            ("100.64.0.1", AddrClass::Cgnat),
            ("100.100.100.200", AddrClass::Cgnat),
            ("100.128.0.1", AddrClass::Public),
            ("169.254.169.254", AddrClass::LinkLocal),
            ("169.254.1.1", AddrClass::LinkLocal),
            ("192.0.0.8", AddrClass::Reserved),
            ("192.0.2.1", AddrClass::Documentation),
            ("198.51.100.1", AddrClass::Documentation),
            ("203.0.113.1", AddrClass::Documentation),
            ("192.88.99.1", AddrClass::Reserved),
            ("198.18.0.1", AddrClass::Reserved),
            ("198.19.255.255", AddrClass::Reserved),
            ("198.20.0.1", AddrClass::Public),
            ("224.0.0.1", AddrClass::Multicast),
            ("239.255.255.250", AddrClass::Multicast),
            ("240.0.0.1", AddrClass::Reserved),
            ("255.255.255.255", AddrClass::Broadcast),
            ("2606:4700:4700::1111", AddrClass::Public),
            ("::", AddrClass::Unspecified),
            ("::1", AddrClass::Loopback),
            ("::ffff:127.0.0.1", AddrClass::Loopback),
            ("::ffff:169.254.169.254", AddrClass::LinkLocal),
            ("::ffff:8.8.8.8", AddrClass::Public),
            ("64:ff9b::a00:1", AddrClass::Private),
            ("64:ff9b::808:808", AddrClass::Public),
            ("2002:7f00:1::", AddrClass::Loopback),
            ("2002:a9fe:a9fe::1", AddrClass::LinkLocal),
            ("2002:808:808::1", AddrClass::Public),
            ("fc00::1", AddrClass::Private),
            ("fd00::1", AddrClass::Private),
            ("fd00:ec2::254", AddrClass::Private),
            ("fec0::1", AddrClass::Private),
            ("fe80::1", AddrClass::LinkLocal),
            ("febf::1", AddrClass::LinkLocal),
            ("ff02::1", AddrClass::Multicast),
            ("2001:db8::1", AddrClass::Documentation),
            ("3fff::1", AddrClass::Documentation),
            ("3fff:1000::1", AddrClass::Public),
            ("2001::1", AddrClass::Reserved),
            ("2001:10::1", AddrClass::Reserved),
            ("2001:200::1", AddrClass::Public),
            ("100::1", AddrClass::Reserved),
            ("::1.2.3.4", AddrClass::Reserved),
            ("4000::1", AddrClass::Reserved),
        ];
        for (text, expected) in cases {
            assert_eq!(classify(ip(text)), expected, "{text}");
        }
        assert_eq!(describe(ip("169.254.169.254")), "link-local (cloud metadata)");
        assert_eq!(describe(ip("::ffff:169.254.169.254")), "link-local (cloud metadata)");
        assert_eq!(describe(ip("fd00:ec2::254")), "link-local (cloud metadata)");
        assert_eq!(describe(ip("10.1.1.1")), "private (RFC 1918)");
        assert_eq!(describe(ip("fd12::1")), "private (RFC 4193 unique local)");
        assert_eq!(describe(ip("100.64.1.1")), "shared address space (CGNAT, RFC 6598)");
    }
}
