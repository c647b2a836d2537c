// When a request reached this process: the earliest moment the app can know it. The webhook route's
// recording deadline counts from here (contract §6: the service waits 10 s from sending, and counts a
// late answer as a failure it never retries). Next.js hands a route its request only after routing
// and proxy.ts, which under a burst is seconds after the node server parsed the request; counted from
// the handler, answers to a burst of 2,000 came after 10 s (issue 34).
//
// Node's own hook for it, the diagnostics channel "http.server.request.start", fires as the HTTP
// server emits the request, before any listener (Next.js's) runs. The stamp travels to the route as a
// request header, always overwritten here, so a sender cannot choose it; the route trusts it only
// within ARRIVAL_MAX_AGE_MS of now, and falls back to its own clock when no stamp is there (a server
// started some other way, or a request that arrived before instrumentation.ts subscribed).
import diagnostics from "node:diagnostics_channel";
import type { IncomingMessage } from "node:http";
import { PRODUCT } from "@/lib/config/product";

export const ARRIVAL_HEADER = PRODUCT.arrivalHeader;
/** Longer than any wait the route could see; a stamp older than this (or in the future) is not ours. */
const ARRIVAL_MAX_AGE_MS = 60_000;

const SUBSCRIBED = Symbol.for("partner-app.arrival-stamp");
const globalWithFlag = globalThis as typeof globalThis & { [SUBSCRIBED]?: boolean };

/** Stamps every request this process's HTTP server receives, once per process (instrumentation.ts). */
export function stampRequestArrivals(): void {
  if (globalWithFlag[SUBSCRIBED]) return;
  globalWithFlag[SUBSCRIBED] = true;
  diagnostics.subscribe("http.server.request.start", (message) => {
    const { request } = message as { request: IncomingMessage };
    request.headers[ARRIVAL_HEADER] = String(Date.now());
  });
}

/** When the request arrived (epoch ms), from the stamp if there is a believable one, else now. */
export function arrivedAt(headers: Headers, now = Date.now()): number {
  const stamp = Number(headers.get(ARRIVAL_HEADER));
  return Number.isFinite(stamp) && stamp <= now && now - stamp <= ARRIVAL_MAX_AGE_MS ? stamp : now;
}
