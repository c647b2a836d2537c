// The key a per-address rate limit counts under (lib/http/client-address.ts): IPv4 as is, IPv4-mapped
// IPv6 as its IPv4, any other IPv6 address by its /64 however it is written.
import { describe, expect, it } from "vitest";
import { addressLimitKey } from "@/lib/http/client-address";

describe("addressLimitKey", () => {
  it("keeps an IPv4 address as it is", () => {
    expect(addressLimitKey("198.51.100.7")).toBe("198.51.100.7");
  });

  it.each([["::ffff:198.51.100.7"], ["::FFFF:c633:6407"], ["0:0:0:0:0:ffff:c633:6407"]])("reads the IPv4-mapped %s as its IPv4", (address) => {
    expect(addressLimitKey(address)).toBe("198.51.100.7");
  });

  it("gives every address of one /64 the same key, whatever the spelling", () => {
    const spellings = [
      "2001:db8::1",
      "2001:0db8:0:0::2",
      "2001:DB8:0000:0000:ffff:ffff:ffff:ffff",
      "2001:db8:0:0:1:0:0:1",
      "2001:db8::abcd:1.2.3.4",
      "2001:db8::1%eth0",
    ];
    for (const address of spellings) expect(addressLimitKey(address), address).toBe("2001:db8::/64");
  });

  it("tells /64s apart, and writes each prefix in its canonical form", () => {
    expect(addressLimitKey("2001:db8:0:1::1")).toBe("2001:db8:0:1::/64");
    expect(addressLimitKey("2001:db8:1::1")).toBe("2001:db8:1::/64");
    expect(addressLimitKey("2001:0db8:00ab:cdef:1:2:3:4")).toBe("2001:db8:ab:cdef::/64");
    expect(addressLimitKey("fe80::1")).toBe("fe80::/64");
    expect(addressLimitKey("::1")).toBe("::/64");
    expect(addressLimitKey("::")).toBe("::/64");
    // IPv4-compatible (deprecated) and NAT64 addresses are IPv6 addresses like any other.
    expect(addressLimitKey("::198.51.100.7")).toBe("::/64");
    expect(addressLimitKey("64:ff9b::198.51.100.7")).toBe("64:ff9b::/64");
  });

  it("leaves what is not an address as its own key", () => {
    expect(addressLimitKey("unknown")).toBe("unknown");
    expect(addressLimitKey("2001:db8::g")).toBe("2001:db8::g");
  });
});
