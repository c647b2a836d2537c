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
