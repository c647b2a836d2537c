// The address a request came from, for rate limits and logs. Never for authorization.
//
// Route handlers and next-auth's `authorize(credentials, req)` do not see the socket: `next start`
// passes the peer's address in X-Forwarded-For, but only when the request did not carry that header
// already (node_modules/next/dist/server/base-server.js: `headers['x-forwarded-for'] ??= socket.remoteAddress`).
// So what the header's entries mean depends on what stands in front of the app:
//
// - TRUSTED_PROXY_COUNT=0, `next start` faces the clients: the header is either Next's own (the peer)
//   or whatever the client sent. A client can therefore name its own address, and per-address
//   limits only slow down honest-looking clients; the per-account limit and the hashing semaphore
//   are what hold against a determined one. Put a proxy in front in production.
// - TRUSTED_PROXY_COUNT=N (N proxies, each appending the address it saw, as nginx's
//   $proxy_add_x_forwarded_for, Caddy, Traefik and most platform load balancers do): entries
//   left of the N-th from the right were written by the client and are ignored; the N-th from the
//   right is the address the outermost trusted proxy saw.
//
// Per-address limits count by `addressLimitKey`, not by the address itself: one IPv6 subscriber
// holds a whole /64 (RFC 6177; SLAAC and privacy extensions, RFC 8981, pick any of its 2^64
// addresses), so a limit per IPv6 address would give one client a fresh budget per request.
import "server-only";
import { isIP } from "node:net";
import { env } from "@/lib/env";

type HeaderSource = Headers | Record<string, string | string[] | undefined> | undefined;

function headerValue(headers: HeaderSource, name: string): string | undefined {
  if (!headers) return undefined;
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const value = headers[name] ?? headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(",") : value;
}

/** The client's address as `TRUSTED_PROXY_COUNT` says to read it, or "unknown". */
export function clientAddress(headers: HeaderSource, trustedProxies = env().TRUSTED_PROXY_COUNT): string {
  const entries = (headerValue(headers, "x-forwarded-for") ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (entries.length === 0) return "unknown";
  const index = Math.max(entries.length - Math.max(trustedProxies, 1), 0);
  const candidate = entries[index]!.replace(/^\[(.*)\](?::\d+)?$/, "$1").replace(/^::ffff:/, "");
  // A client-written header may hold anything: keep only a real IP, so the rate-limit key and the
  // log line never carry what a stranger typed.
  return isIP(candidate) ? candidate : "unknown";
}

/**
 * The key a per-address rate limit counts under: an IPv4 address as it is; an IPv4-mapped IPv6
 * address (`::ffff:a.b.c.d`) as its IPv4, since it is the same client; any other IPv6 address by
 * its /64 prefix, written one way whatever the spelling (`2001:db8::1` and `2001:0DB8:0:0::2` are
 * both `2001:db8::/64`). Anything else ("unknown") is its own key.
 *
 * Node has no call that gives an address's prefix (`net.BlockList` only answers "is it inside", and
 * `net.SocketAddress` only re-spells the address), and no dependency of this app parses IPv6. The
 * WHATWG URL parser does the hard part: it validates the address and writes it in one canonical
 * form (lower-case hex, no leading zeros, an embedded IPv4 turned into two hex groups, the longest
 * run of zero groups as `::`). What is left is expanding that one `::`, which is done by hand below.
 */
export function addressLimitKey(address: string): string {
  if (isIP(address) === 4) return address;
  const groups = ipv6Groups(address);
  if (!groups) return address;
  // ::ffff:0:0/96 is IPv4 on a dual-stack socket (RFC 4291 §2.5.5.2).
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join(".");
  }
  const prefix = new URL(`http://[${groups.slice(0, 4).map((group) => group.toString(16)).join(":")}::]/`).hostname;
  return `${prefix.slice(1, -1)}/64`;
}

/** The eight 16-bit groups of an IPv6 address (a zone, `%eth0`, ignored), or null if it is not one. */
function ipv6Groups(address: string): number[] | null {
  const bare = address.replace(/%.*$/, "");
  if (isIP(bare) !== 6) return null;
  let canonical: string;
  try {
    canonical = new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
  const [head, tail] = canonical.split("::") as [string, string | undefined];
  const parse = (part: string | undefined) => (part ? part.split(":").map((group) => Number.parseInt(group, 16)) : []);
  const before = parse(head);
  const after = parse(tail);
  const zeros = tail === undefined ? [] : new Array<number>(8 - before.length - after.length).fill(0);
  const groups = [...before, ...zeros, ...after];
  return groups.length === 8 ? groups : null;
}
