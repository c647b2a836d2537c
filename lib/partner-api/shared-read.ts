// One API read for identical reads in flight at the same moment, in this process.
//
// An operator who opens four tabs at once, or whose dashboard reloads while a page is still
// loading, asks for the same page of the same resource several times within milliseconds. Each
// copy would load and decrypt the token, take a unit of the install's rate budget (contract §8),
// wait for the same refresh when the token is due, and make the same request. Sharing the one
// read that is already in flight gives every caller the same answer (or the same error) the
// service would have given each of them a moment apart, for one request.
//
// Only reads, only while in flight: nothing is kept after the read settles, so this is not a cache
// and never serves an answer older than the request that asked for it. Across processes nothing
// is shared (each instance makes its own read, as before).
//
// Written by hand because the job is a Map of promises: the libraries that do this (DataLoader,
// p-memoize) batch per tick or keep results after they settle, neither of which is wanted here.
import "server-only";

const inFlight = new Map<string, Promise<unknown>>();

/**
 * Runs `read`, or joins the identical read (same `key`) already in flight. The key must name
 * everything the answer depends on: the install, the operation and its parameters.
 */
export function sharedRead<T>(key: string, read: () => Promise<T>): Promise<T> {
  const running = inFlight.get(key);
  if (running) return running as Promise<T>;
  const started = read().finally(() => inFlight.delete(key));
  inFlight.set(key, started);
  return started;
}

/** How many distinct reads are in flight (tests). */
export function sharedReadsInFlight(): number {
  return inFlight.size;
}
