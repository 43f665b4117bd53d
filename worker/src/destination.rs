//! Where an outgoing request would go, decided from the URL alone (pure): the public internet, this machine, or an
//! internal address that no URL taken from chain data, metadata or an API caller may reach (SSRF).
//!
//! Used for every URL the Worker fetches on someone else's say: the indexer's metadata URLs (and each redirect) and
//! the webhooks' URLs. IP literals are classified by IANA's special-purpose registries (IPv4 and IPv6), including
//! IPv4 addresses embedded in IPv6 ones (mapped, compatible, NAT64, 6to4), so that no spelling of an internal
//! address passes; names are refused when they can only resolve inside a network (`localhost` and `*.localhost`,
//! `.local`, `.internal`, `.home.arpa`, … and single labels, which a resolver completes with its search domains).
//! The `url` crate has already turned every IPv4 spelling of a special scheme (decimal, octal, hex, short forms)
//! into the dotted form, and lower-cased names.
//!
//! What this cannot see: a public name whose DNS answer is an internal address. On Cloudflare a Worker's `fetch`
//! cannot reach a private network; a self-hosted `workerd` should run where its egress is filtered too
//! (docs/operations.md).

use std::net::{Ipv4Addr, Ipv6Addr};

use url::{Host, Url};

/// Where a request to a host goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Destination {
    /// An address or name of the public internet.
    Public,
    /// This machine: `localhost`, `*.localhost`, 127.0.0.0/8, `::1` (reachable only under a dev flag).
    Loopback,
    /// A private, link-local, shared, reserved or otherwise non-public address or name; the reason names the range.
    Internal(&'static str),
}

impl Destination {
    /// Whether a request may go there: public always, loopback only when `allow_loopback`.
    pub const fn allowed(self, allow_loopback: bool) -> bool {
        match self {
            Self::Public => true,
            Self::Loopback => allow_loopback,
            Self::Internal(_) => false,
        }
    }
}

/// Where a request to `url` goes (a URL without a host is internal: nothing to reach).
pub fn of_url(url: &Url) -> Destination {
    url.host()
        .map_or(Destination::Internal("no host"), |host| of_host(&host))
}

/// Where a request to `host` goes.
pub fn of_host(host: &Host<&str>) -> Destination {
    match host {
        Host::Domain(name) => of_name(name),
        Host::Ipv4(ip) => of_ipv4(*ip),
        Host::Ipv6(ip) => of_ipv6(*ip),
    }
}

/// Suffixes of names that resolve only inside a network: RFC 6761 (`localhost`, `invalid`, `test`), RFC 6762
/// (`local`), RFC 8375 (`home.arpa`), ICANN's private-use `internal` (2024), and common private zones.
const INTERNAL_SUFFIXES: [&str; 9] = [
    "local",
    "internal",
    "home.arpa",
    "localdomain",
    "lan",
    "intranet",
    "corp",
    "invalid",
    "test",
];

fn of_name(name: &str) -> Destination {
    // one trailing dot is the same name, absolute
    let name = name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase();
    if name == "localhost" || name.ends_with(".localhost") {
        return Destination::Loopback;
    }
    if name.is_empty() || !name.contains('.') {
        return Destination::Internal("a single-label name (completed by the resolver's search domains)");
    }
    let internal = INTERNAL_SUFFIXES
        .iter()
        .any(|s| name == *s || name.strip_suffix(s).is_some_and(|rest| rest.ends_with('.')));
    if internal {
        return Destination::Internal("a name of a private or local-network zone");
    }
    // the reverse zones of the private and link-local ranges
    if name.ends_with(".in-addr.arpa") || name.ends_with(".ip6.arpa") {
        return Destination::Internal("a reverse-DNS name");
    }
    Destination::Public
}

/// IANA's IPv4 special-purpose address registry, the ranges not globally reachable (and the 6to4 relay anycast).
fn of_ipv4(ip: Ipv4Addr) -> Destination {
    let [a, b, c, _] = ip.octets();
    let why = match (a, b, c) {
        (127, _, _) => return Destination::Loopback,
        (0, _, _) => "0.0.0.0/8, this network",
        (10, _, _) => "10.0.0.0/8, private",
        (100, 64..=127, _) => "100.64.0.0/10, shared (carrier-grade NAT)",
        (169, 254, _) => "169.254.0.0/16, link-local (cloud metadata services)",
        (172, 16..=31, _) => "172.16.0.0/12, private",
        (192, 0, 0) => "192.0.0.0/24, IETF protocol assignments",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "a documentation range",
        (192, 88, 99) => "192.88.99.0/24, 6to4 relay anycast",
        (192, 168, _) => "192.168.0.0/16, private",
        (198, 18..=19, _) => "198.18.0.0/15, benchmarking",
        (224..=239, _, _) => "224.0.0.0/4, multicast",
        (240..=255, _, _) => "240.0.0.0/4, reserved (and the broadcast address)",
        _ => return Destination::Public,
    };
    Destination::Internal(why)
}

/// IANA's IPv6 special-purpose address registry; outside 2000::/3 nothing is global unicast. IPv4 addresses carried
/// inside an IPv6 one are classified as the IPv4 address (a public one through NAT64 or 6to4 stays public).
fn of_ipv6(ip: Ipv6Addr) -> Destination {
    let s = ip.segments();
    let embedded = |hi: u16, lo: u16| {
        let [h0, h1] = hi.to_be_bytes();
        let [l0, l1] = lo.to_be_bytes();
        Ipv4Addr::new(h0, h1, l0, l1)
    };
    if ip == Ipv6Addr::LOCALHOST {
        return Destination::Loopback;
    }
    if ip.is_unspecified() {
        return Destination::Internal("::, unspecified");
    }
    match s {
        // ::ffff:a.b.c.d, IPv4-mapped
        [0, 0, 0, 0, 0, 0xffff, hi, lo] => return of_ipv4(embedded(hi, lo)),
        // ::a.b.c.d, IPv4-compatible (deprecated): never routed, whatever it carries
        [0, 0, 0, 0, 0, 0, _, _] => {
            return Destination::Internal("::/96, IPv4-compatible (deprecated)");
        }
        // 64:ff9b::a.b.c.d, the NAT64 well-known prefix
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => {
            return match of_ipv4(embedded(hi, lo)) {
                Destination::Public => Destination::Public,
                _ => Destination::Internal("64:ff9b::/96, NAT64 of a non-public IPv4 address"),
            };
        }
        // 2002:AABB:CCDD::/48, 6to4 of the IPv4 address AA.BB.CC.DD
        [0x2002, hi, lo, ..] => {
            return match of_ipv4(embedded(hi, lo)) {
                Destination::Public => Destination::Public,
                _ => Destination::Internal("2002::/16, 6to4 of a non-public IPv4 address"),
            };
        }
        _ => {}
    }
    let first = s[0];
    let why = if first & 0xe000 != 0x2000 {
        match first {
            0x0064 if s[1] == 0xff9b => "64:ff9b::/48, local-use NAT64",
            0x0100 => "100::/64, discard-only",
            0x5f00 => "5f00::/16, SRv6 segment identifiers",
            _ if first & 0xfe00 == 0xfc00 => "fc00::/7, unique local",
            _ if first & 0xffc0 == 0xfe80 => "fe80::/10, link-local",
            _ if first & 0xffc0 == 0xfec0 => "fec0::/10, site-local (deprecated)",
            _ if first & 0xff00 == 0xff00 => "ff00::/8, multicast",
            _ => "outside 2000::/3, not global unicast",
        }
    } else if first == 0x2001 && s[1] < 0x0200 {
        // 2001::/23 holds Teredo (2001::/32, an obfuscated IPv4 address), ORCHID, benchmarking (2001:2::/48), …
        "2001::/23, IETF protocol assignments (Teredo, benchmarking, ORCHID)"
    } else if first == 0x2001 && s[1] == 0x0db8 {
        "2001:db8::/32, documentation"
    } else if first == 0x3fff && s[1] < 0x1000 {
        "3fff::/20, documentation"
    } else {
        return Destination::Public;
    };
    Destination::Internal(why)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::net::IpAddr;

    use super::*;

    fn of_ip(ip: IpAddr) -> Destination {
        match ip {
            IpAddr::V4(v4) => of_ipv4(v4),
            IpAddr::V6(v6) => of_ipv6(v6),
        }
    }

    fn of(url: &str) -> Destination {
        of_url(&Url::parse(url).unwrap())
    }

    #[test]
    fn public_addresses_and_names() {
        for url in [
            "https://example.org/x",
            "https://api.lukso.network./",
            "https://8.8.8.8/",
            "https://1.1.1.1/",
            "https://100.63.255.255/",
            "https://100.128.0.1/",
            "https://172.15.255.255/",
            "https://172.32.0.1/",
            "https://192.0.1.1/",
            "https://192.169.0.1/",
            "https://198.20.0.1/",
            "https://223.255.255.255/",
            "https://[2606:4700:4700::1111]/",
            "https://[2001:4860:4860::8888]/",
            "https://[::ffff:8.8.8.8]/",
            "https://[64:ff9b::808:808]/",
            "https://[2002:808:808::1]/",
            "https://local.example.org/",
            "https://internal-tools.example.org/",
        ] {
            assert_eq!(of(url), Destination::Public, "{url}");
        }
    }

    #[test]
    fn loopback_in_every_spelling() {
        for url in [
            "https://localhost/",
            "https://LOCALHOST./",
            "https://a.b.localhost/",
            "https://127.0.0.1/",
            "https://127.1/",
            "https://2130706433/",
            "https://0x7f000001/",
            "https://0177.0.0.1/",
            "https://127.255.255.254/",
            "https://[::1]/",
            "https://[0:0:0:0:0:0:0:1]/",
            "https://[::ffff:127.0.0.1]/",
        ] {
            assert_eq!(of(url), Destination::Loopback, "{url}");
        }
    }

    #[test]
    fn internal_in_every_spelling() {
        for url in [
            // the cloud metadata service, spelled every way the issue found accepted, and more
            "https://169.254.169.254/latest/meta-data",
            "https://2852039166/",
            "https://0xa9.0xfe.0xa9.0xfe/",
            "https://[::169.254.169.254]/",
            "https://[::ffff:169.254.169.254]/",
            "https://[::ffff:a9fe:a9fe]/",
            "https://[64:ff9b::a9fe:a9fe]/",
            "https://[64:ff9b::169.254.169.254]/",
            "https://[2002:a9fe:a9fe::1]/",
            "https://metadata.google.internal/",
            "https://metadata.google.internal./",
            "https://metadata/",
            // private and other non-public ranges
            "https://0.0.0.0/",
            "https://0/",
            "https://10.0.0.1/",
            "https://10.255.255.255/",
            "https://100.64.0.1/",
            "https://172.16.0.1/",
            "https://172.31.255.255/",
            "https://192.0.0.170/",
            "https://192.0.2.1/",
            "https://192.88.99.1/",
            "https://192.168.1.1/",
            "https://198.18.0.1/",
            "https://198.51.100.7/",
            "https://203.0.113.9/",
            "https://224.0.0.1/",
            "https://255.255.255.255/",
            "https://[::]/",
            "https://[::a00:1]/",
            "https://[::ffff:10.0.0.1]/",
            "https://[64:ff9b::10.0.0.1]/",
            "https://[64:ff9b:1::1]/",
            "https://[100::1]/",
            "https://[2001::1]/",
            "https://[2001:2::1]/",
            "https://[2001:db8::1]/",
            "https://[2002:7f00:1::1]/",
            "https://[2002:c0a8:101::1]/",
            "https://[3fff::1]/",
            "https://[5f00::1]/",
            "https://[fc00::1]/",
            "https://[fd12:3456::1]/",
            "https://[fe80::1]/",
            "https://[febf::1]/",
            "https://[fec0::1]/",
            "https://[ff02::1]/",
            "https://[4000::1]/",
            // names of local networks
            "https://printer.local/",
            "https://router.home.arpa/",
            "https://nas.lan/",
            "https://x.corp/",
            "https://host.localdomain/",
            "https://a.test/",
            "https://a.invalid/",
            "https://intranet/",
            "https://1.0.0.10.in-addr.arpa/",
        ] {
            assert!(
                matches!(of(url), Destination::Internal(_)),
                "{url}: {:?}",
                of(url)
            );
        }
    }

    #[test]
    fn the_boundaries_of_each_range() {
        // each address with the range it falls in (`None`: public), on both sides of every edge
        let why = |s: &str| match of_ip(s.parse().unwrap()) {
            Destination::Internal(why) => Some(why),
            Destination::Loopback => Some("loopback"),
            Destination::Public => None,
        };
        for (ip, range) in [
            ("9.255.255.255", None),
            ("10.0.0.0", Some("10.0.0.0/8")),
            ("10.255.255.255", Some("10.0.0.0/8")),
            ("11.0.0.0", None),
            ("100.63.255.255", None),
            ("100.64.0.0", Some("100.64.0.0/10")),
            ("100.127.255.255", Some("100.64.0.0/10")),
            ("100.128.0.0", None),
            ("126.255.255.255", None),
            ("127.0.0.0", Some("loopback")),
            ("128.0.0.0", None),
            ("169.253.255.255", None),
            ("169.254.0.0", Some("169.254.0.0/16")),
            ("169.255.0.0", None),
            ("172.15.255.255", None),
            ("172.16.0.0", Some("172.16.0.0/12")),
            ("172.31.255.255", Some("172.16.0.0/12")),
            ("172.32.0.0", None),
            ("192.167.255.255", None),
            ("192.168.0.0", Some("192.168.0.0/16")),
            ("192.169.0.0", None),
            ("198.17.255.255", None),
            ("198.18.0.0", Some("198.18.0.0/15")),
            ("198.19.255.255", Some("198.18.0.0/15")),
            ("198.20.0.0", None),
            ("223.255.255.255", None),
            ("224.0.0.0", Some("224.0.0.0/4")),
            ("1fff:ffff::", Some("outside 2000::/3")),
            ("2000::", None),
            ("2001::", Some("2001::/23")),
            ("2001:1ff:ffff::", Some("2001::/23")),
            ("2001:200::", None),
            ("2001:db7:ffff::", None),
            ("2001:db8::", Some("2001:db8::/32")),
            ("2001:db9::", None),
            ("3ffe:ffff::", None),
            ("3fff::", Some("3fff::/20")),
            ("3fff:fff:ffff::", Some("3fff::/20")),
            ("3fff:1000::", None),
            ("3fff:ffff::", None),
            ("4000::", Some("outside 2000::/3")),
            ("fbff:ffff::", Some("outside 2000::/3")),
            ("fc00::", Some("fc00::/7")),
            ("fdff:ffff::", Some("fc00::/7")),
            ("fe7f:ffff::", Some("outside 2000::/3")),
            ("fe80::", Some("fe80::/10")),
            ("febf:ffff::", Some("fe80::/10")),
            ("fec0::", Some("fec0::/10")),
            ("feff:ffff::", Some("fec0::/10")),
            ("ff00::", Some("ff00::/8")),
        ] {
            match (why(ip), range) {
                (None, None) => {}
                (Some(got), Some(want)) => assert!(got.starts_with(want), "{ip}: {got}, not {want}"),
                (got, want) => panic!("{ip}: {got:?}, not {want:?}"),
            }
        }
    }

    #[test]
    fn allowed_only_public_and_loopback_under_the_flag() {
        assert!(Destination::Public.allowed(false));
        assert!(!Destination::Loopback.allowed(false));
        assert!(Destination::Loopback.allowed(true));
        assert!(!Destination::Internal("x").allowed(true));
        assert_eq!(of("data:text/plain,x"), Destination::Internal("no host"));
    }
}
