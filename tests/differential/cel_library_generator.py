"""Generator for the Kubernetes IP, CIDR, URL and named-format CEL libraries.

Every function and overload those libraries declare is produced (``LIBRARY_OVERLOADS`` lists
them; a test checks that generated cases reach each one), over literal inputs chosen at the
corners of Go's ``net/netip`` and ``net/url`` parsers and of the apimachinery validators,
and over device attributes holding such strings (``dyn`` arguments: dynamic dispatch, DRA
size estimates).  Results stay in forms both engines print alike: no top-level optional or
``kubernetes.NamedFormat`` value (the oracle prints those with Go's ``%v``, pointers included).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import strategies as st

from tests.differential.cel_generator import DRIVERS, CelCase, _quote, devices

IP_TEXTS = (
    "192.168.0.1",
    "127.0.0.1",
    "0.0.0.0",
    "255.255.255.255",
    "224.0.0.1",
    "224.0.1.1",
    "169.254.169.254",
    "10.1.2.3",
    "11.0.0.1",
    "::",
    "::1",
    "2001:db8::68",
    "2001:DB8::ABCD",
    "2001:db8::0:0:0:abcd",
    "2001:db8:0:0:1:0:0:1",
    "fe80::1",
    "fd80::1",
    "ff02::1",
    "ff00::1",
    "1:2:3:4:5:6:7:8",
    "::1.2.3.4",
    "1:2:3:4:5:6:1.2.3.4",
    "::ffff:1.2.3.4",
    "::ffff:102:304",
    "fe80::1%eth0",
    "fe80::1%",
    "01.2.3.4",
    "1.2.3",
    "1.2.3.4.5",
    "1.2.3.256",
    "1..2.3",
    ".1.2.3",
    "1.2.3.4%eth0",
    ":::1",
    "1::2::3",
    "12345::1",
    "1:2:3:4:5:6:7:8:9",
    "1:2:3:4:5:6:7:8::",
    "1:",
    "::g",
    "abc",
    "",
    "%x",
    "é.1",
    "1.2.3.x",
)
CIDR_TEXTS = (
    "192.168.0.0/24",
    "192.168.0.1/24",
    "10.0.0.0/8",
    "10.1.0.0/16",
    "0.0.0.0/0",
    "1.2.3.4/32",
    "2001:db8::/32",
    "2001:db8::68/32",
    "2001:db8::/126",
    "::/0",
    "::1/128",
    "fe80::/10",
    "10.0.0.0/33",
    "::/129",
    "10.0.0.0/08",
    "10.0.0.0/-1",
    "10.0.0.0/+1",
    "10.0.0.0/",
    "10.0.0.0",
    "10.0.0.0/99999999999999999999",
    "fe80::1%eth0/64",
    "::ffff:1.2.3.4/100",
    "01.0.0.0/8",
    "bad",
    "/8",
    "",
)
URL_TEXTS = (
    "https://user:pass@example.com:80/path?query=val#fragment",
    "/absolute-path",
    "https://a:b:c/",
    "foo://a:b:c/",
    "../relative-path",
    "",
    "*",
    "x:y",
    "mailto:x@y",
    "http:/a",
    "http:///a",
    "//host/a",
    "///a",
    "/a?b?c",
    "/a?",
    "/a#b",
    "HTTPS://example.com/",
    "https://example.com:80/",
    "https://example.com/",
    "https://[::1]:80/",
    "https://[::1]/",
    "https://127.0.0.1:80/",
    "http://[1.2.3.4]/",
    "http://[::1/",
    "http://[::1]x/",
    "http://a[b]/",
    "http://[fe80::1%25en0]/",
    "http://[fe80::1%25en%0]/",
    "http://a%zz/",
    "http://a%41/",
    "http://a b/",
    "http://u@ser@host/",
    "http://us^er@host/",
    "http://us%zzer@host/",
    "http://host/p%zz",
    "http://host/p#%zz",
    "http://host/p#f%20g",
    "https://example.com/path with spaces/",
    "https://example.com/p%2Fq",
    "https://example.com/p%41q",
    "https://example.com",
    "https://example.com/ü",
    "http://é.com/",
    "https://example.com/path?k1=a&k2=b&k2=c",
    "https://example.com/path?key with spaces=value with spaces",
    "https://example.com/path?",
    "https://example.com/path?a=1;b=2&c=3",
    "https://example.com/path?a=%zz&c=3+4&d=%41",
    "https://example.com/path?a&&b=",
    "http://h:8a/",
    "https://[::1]:/",
    "http://h/a\tb",
)
FORMAT_NAMES = (
    "dns1123Label",
    "dns1123Subdomain",
    "dns1035Label",
    "qualifiedName",
    "dns1123LabelPrefix",
    "dns1123SubdomainPrefix",
    "dns1035LabelPrefix",
    "labelValue",
    "uri",
    "uuid",
    "byte",
    "date",
    "datetime",
)
FORMAT_INPUTS = (
    "",
    "my-label-name",
    "a.b",
    "A",
    "-x",
    "1abc",
    "a-",
    "-",
    "ab.-",
    "x.-",
    "contains a space",
    "apiextensions.k8s.io",
    "apiextensions.k8s.io/v1beta1",
    "a/b/c",
    "/b",
    "a/",
    "A_B/c",
    "my_value",
    "my-cool-label-Value!!\n\n!!!",
    "a" * 63,
    "a" * 64,
    "a" * 70,
    "a" * 253,
    "a" * 254,
    ("a" * 63 + ".") * 4,
    "é",
    "ü-",
    "http://example.com",
    "../x",
    "123e4567-e89b-12d3-a456-426614174000",
    "123E4567E89B12D3A456426614174000",
    "123e4567-e89b-12d3-a456-42661417400",
    "aGVsbG8=",
    "aGVsbG8",
    "ZWxpemFiZXRocG9zZXk=",
    "2021-01-01",
    "2021-02-29",
    "2020-02-29",
    "2021-13-01",
    "2021-1-01",
    "0000-01-01",
    "2021-01-01T00:00:00Z",
    "2021-01-01T00:00:00.123+01:00",
    "2021-01-01t23:59:59z",
    "2021-01-01T24:00:00Z",
    "2021-01-01T00:00:00",
    "2021-01-01T00:00:00ZTfoo",
    "2021-01-01 00:00:00Z",
    "2020-01-32T00:00:00Z",
)

#: Every overload id the four libraries declare (apiserver pkg/cel/library).
LIBRARY_OVERLOADS = frozenset(
    {
        "string_to_ip",
        "ip_family",
        "ip_is_canonical",
        "ip_is_unspecified",
        "ip_is_loopback",
        "ip_is_link_local_multicast",
        "ip_is_link_local_unicast",
        "ip_is_global_unicast",
        "is_ip",
        "ip_to_string",
        "string_to_cidr",
        "cidr_contains_ip_string",
        "cidr_contains_ip_ip",
        "cidr_contains_cidr_string",
        "cidr_contains_cidr",
        "cidr_ip",
        "cidr_prefix_length",
        "cidr_masked",
        "is_cidr",
        "cidr_to_string",
        "string_to_url",
        "url_get_scheme",
        "url_get_host",
        "url_get_hostname",
        "url_get_port",
        "url_get_escaped_path",
        "url_get_query",
        "is_url_string",
        "format-validate",
        "format-named",
        *(f"format.{n}" for n in FORMAT_NAMES),
    }
)

NET_ATTRIBUTES = {"addr": IP_TEXTS, "subnet": CIDR_TEXTS, "endpoint": URL_TEXTS, "label": FORMAT_INPUTS}

# Result types of this grammar, beyond the core grammar's.
IPT, CIDRT, URLT, FMT = "ip", "cidr", "url", "format"


class _Choose:
    """Choices from Hypothesis (``draw``: shrinkable) or from ``random.Random`` (the bulk run:
    reproducible by seed, and without Hypothesis' pull towards the first alternatives, which
    would repeat the same few expressions)."""

    def __init__(self, draw: st.DrawFn | None = None, rng: random.Random | None = None) -> None:
        self.draw, self.rng = draw, rng

    def pick(self, options: Sequence[Any]) -> Any:
        if self.rng is not None:
            return self.rng.choice(options)
        assert self.draw is not None
        return self.draw(st.sampled_from(options))

    def chance(self, n: int) -> bool:
        """True about 1 time in ``n``."""
        return self.pick(range(n)) == 0


class _Lib:
    """The productions; ``device`` is the device the expression is evaluated against."""

    def __init__(self, c: _Choose, device: dict[str, Any]) -> None:
        self.c = c
        self.device = device

    def one(self, *options: Callable[[], str]) -> str:
        """One of the alternatives, built only once chosen."""
        return str(self.c.pick(options)())

    def text(self, pool: tuple[str, ...], attr: str) -> str:
        """A string: a literal from the pool, or the device attribute holding such strings."""
        c = self.c
        attrs = self.device.get("attributes") or {}
        if attr in attrs and c.chance(3):
            return f"device.attributes[{_quote(self.device['driver'])}].{attr}"
        return _quote(c.pick(pool))

    def ip(self, d: int) -> str:
        c = self.c
        if d > 0 and c.chance(3):
            return f"{self.cidr(d - 1)}.ip()"
        if d > 0 and c.chance(6):
            return f"cel.bind(a, {self.ip(d - 1)}, a)"
        return f"ip({self.text(IP_TEXTS, 'addr')})"

    def cidr(self, d: int) -> str:
        if d > 0 and self.c.chance(3):
            return f"{self.cidr(d - 1)}.masked()"
        return f"cidr({self.text(CIDR_TEXTS, 'subnet')})"

    def url(self) -> str:
        return f"url({self.text(URL_TEXTS, 'endpoint')})"

    def named_format(self) -> str:
        c = self.c
        if c.chance(3):
            return f"format.named({_quote(c.pick((*FORMAT_NAMES, 'nope', 'DNS1123Label')))}).value()"
        return f"format.{c.pick(FORMAT_NAMES)}()"

    def validate(self) -> str:
        """An optional list of messages (never a result on its own)."""
        return f"{self.named_format()}.validate({self.text(FORMAT_INPUTS, 'label')})"

    def any_lib(self, d: int) -> str:
        return self.one(
            lambda: self.ip(d), lambda: self.cidr(d), self.url, self.named_format, lambda: "1", lambda: "'x'"
        )

    def boolean(self, d: int) -> str:
        c = self.c
        ip_s = lambda: self.text(IP_TEXTS, "addr")  # noqa: E731
        cidr_s = lambda: self.text(CIDR_TEXTS, "subnet")  # noqa: E731
        eq = lambda: c.pick(["==", "!="])  # noqa: E731
        return self.one(
            lambda: f"isIP({ip_s()})",
            lambda: f"isCIDR({cidr_s()})",
            lambda: f"isURL({self.text(URL_TEXTS, 'endpoint')})",
            lambda: f"ip.isCanonical({ip_s()})",
            lambda: f"{self.ip(d)}.isUnspecified()",
            lambda: f"{self.ip(d)}.isLoopback()",
            lambda: f"{self.ip(d)}.isLinkLocalMulticast()",
            lambda: f"{self.ip(d)}.isLinkLocalUnicast()",
            lambda: f"{self.ip(d)}.isGlobalUnicast()",
            lambda: f"{self.cidr(d)}.containsIP({ip_s()})",
            lambda: f"{self.cidr(d)}.containsIP({self.ip(d)})",
            lambda: f"{self.cidr(d)}.containsCIDR({cidr_s()})",
            lambda: f"{self.cidr(d)}.containsCIDR({self.cidr(d)})",
            lambda: f"{self.ip(d)} {eq()} {self.ip(d)}",
            lambda: f"{self.cidr(d)} {eq()} {self.cidr(d)}",
            lambda: f"{self.url()} {eq()} {self.url()}",
            lambda: f"{self.named_format()} {eq()} {self.named_format()}",
            lambda: f"{self.validate()}.hasValue()",
            lambda: f"format.named({_quote(c.pick((*FORMAT_NAMES, 'nope', '', 'uri ')))}).hasValue()",
            lambda: f"format.named({self.text(FORMAT_INPUTS, 'label')}).hasValue()",
            # heterogeneous equality through dyn: "no such overload" or false
            lambda: f"dyn({self.any_lib(d)}) {eq()} {self.any_lib(d)}",
            # errors on either side of && / ||
            lambda: f"{self.ip(d)}.isLoopback() {c.pick(['&&', '||'])} {c.pick(['true', 'false'])}",
            lambda: f"{c.pick(['true', 'false'])} {c.pick(['&&', '||'])} {self.cidr(d)}.containsIP({ip_s()})",
            lambda: f"{self.int(d)} {c.pick(['==', '>', '<'])} {c.pick(['0', '4', '6', '24', '32'])}",
            lambda: f"{self.string(d)} {eq()} {_quote(c.pick(('', '80', 'https', '::1', '10.0.0.0/8')))}",
            lambda: f"type({self.any_lib(d)}) == {c.pick(['net.IP', 'net.CIDR', 'string'])}",
        )

    def int(self, d: int) -> str:
        return self.one(
            lambda: f"{self.ip(d)}.family()",
            lambda: f"{self.cidr(d)}.prefixLength()",
            lambda: f"size({self.url()}.getQuery())",
            lambda: f"size({self.validate()}.orValue([]))",
        )

    def string(self, d: int) -> str:
        return self.one(
            lambda: f"string({self.ip(d)})",
            lambda: f"string({self.cidr(d)})",
            lambda: f"{self.url()}.getScheme()",
            lambda: f"{self.url()}.getHost()",
            lambda: f"{self.url()}.getHostname()",
            lambda: f"{self.url()}.getPort()",
            lambda: f"{self.url()}.getEscapedPath()",
            lambda: f"{self.validate()}.orValue(['<valid>'])[0]",
        )

    def value(self, d: int) -> str:
        """Any result the oracle prints faithfully."""
        return self.one(
            lambda: self.ip(d),
            lambda: self.cidr(d),
            self.url,
            lambda: self.int(d),
            lambda: self.string(d),
            lambda: f"{self.url()}.getQuery()",
            lambda: f"{self.validate()}.orValue([])",
            lambda: f"type({self.any_lib(d)})",
            lambda: f"[{self.ip(d)}, {self.ip(d)}]",
        )

    def ill_typed(self, d: int) -> str:
        return self.one(
            lambda: f"string({self.url()})",
            lambda: "ip(1)",
            lambda: f"isIP({self.ip(d)})",
            lambda: f"{self.cidr(d)}.containsIP(1)",
            lambda: f"{self.url()}.foo",
            lambda: f"{self.ip(d)}.foo",
            lambda: f"{self.named_format()}.foo",
            lambda: f"{self.named_format()}.validate(1)",
            lambda: "format.nope()",
            lambda: f"{self.ip(d)} < {self.ip(d)}",
            lambda: f"{self.ip(d)} == {self.cidr(d)}",
            lambda: f"{self.url()}.getQuery()[0]",
            lambda: f"ip.isCanonical({self.ip(d)})",
            lambda: f"{self.ip(d)}.family() == '4'",
            lambda: f"{self.ip(d)} == null",
            lambda: "net.IP",
            lambda: "kubernetes.URL",
        )


def _net_attributes(c: _Choose) -> dict[str, Any]:
    """String attributes holding addresses, prefixes, URLs and format inputs (API-valid: at most
    64 characters)."""
    return {
        ident: {"string": c.pick([v for v in pool if len(v) <= 64])}
        for ident, pool in NET_ATTRIBUTES.items()
        if c.chance(2)
    }


def _case(c: _Choose, device: dict[str, Any], lists: bool, consumable: bool) -> CelCase:
    gates = f"DRAListTypeAttributes={str(lists).lower()},DRAConsumableCapacity={str(consumable).lower()}"
    environment = c.pick(("stored", "new"))
    attributes = {**(device.get("attributes") or {}), **_net_attributes(c)}
    if attributes:
        device = {**device, "attributes": attributes}
    lib = _Lib(c, device)
    depth = c.pick(range(3))
    kind = c.pick(range(10))
    if kind == 0:
        return CelCase(lib.ill_typed(depth), device, environment, gates, ("library:ill-typed",))
    if kind <= 3:
        return CelCase(lib.value(depth), device, environment, gates, ("library:value",))
    return CelCase(lib.boolean(depth), device, environment, gates, ("library:selector",))


@st.composite
def library_cases(draw: st.DrawFn) -> CelCase:
    """A question about the IP, CIDR, URL or format library, on a core-generator device."""
    lists, consumable = draw(st.booleans()), draw(st.booleans())
    return _case(_Choose(draw=draw), draw(devices(lists, consumable)), lists, consumable)


def random_library_case(seed: str) -> CelCase:
    """Case ``seed`` of a bulk run (``"<run seed>:<index>"``), on a device of net attributes."""
    rng = random.Random(seed)
    c = _Choose(rng=rng)
    device = {"name": "dev-0", "driver": c.pick(DRIVERS)}
    lists, consumable = c.chance(2), c.chance(2)
    if consumable and c.chance(2):
        device["allowMultipleAllocations"] = c.chance(2)
    return _case(c, device, lists, consumable)
