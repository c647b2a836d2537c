// Retrying a write while the database is unreachable, for the few writes whose data exists nowhere
// else: a token pair the identity provider just issued (lib/oauth/refresh.ts, lib/installs/connect.ts).
import "server-only";
import { setTimeout as sleep } from "node:timers/promises";
import { Prisma } from "./generated/client";

/** Failures of the connection to the database, which may go away; never the app's own errors. */
function isRetriable(error: unknown): boolean {
  if (error instanceof Prisma.PrismaClientKnownRequestError) return !error.code.startsWith("P2"); // P2xxx: the query itself
  if (error instanceof Prisma.PrismaClientUnknownRequestError || error instanceof Prisma.PrismaClientInitializationError) return true;
  if (!(error instanceof Error)) return false;
  return error.name === "DriverAdapterError" || /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|terminat|timeout|connect/i.test(error.message);
}

/** Runs `write`, retrying with backoff for up to `forMs` while it fails for a retriable reason. */
export async function retryWhileDatabaseUnavailable<T>(write: () => Promise<T>, forMs: number, onRetry?: (error: unknown) => void): Promise<T> {
  const deadline = Date.now() + forMs;
  for (let delay = 250; ; delay = Math.min(delay * 2, 4_000)) {
    try {
      return await write();
    } catch (error) {
      if (Date.now() + delay > deadline || !isRetriable(error)) throw error;
      onRetry?.(error);
      await sleep(delay);
    }
  }
}
