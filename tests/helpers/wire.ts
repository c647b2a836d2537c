// Counting what a test's own process sends to PostgreSQL: every statement (the ingest pool's, Prisma's
// through its pg adapter, pg-boss's, the refresh lock's) passes node-postgres's Client#query, and each
// is one round trip (node-postgres sends a query only once the one before it has answered). The
// helpers' `sql` (tests/helpers/stack.ts) goes that way too: do not use it while `work` runs.
import pg from "pg";

/** What `work` returned, and the text (whitespace folded, the first 100 characters) of every statement sent meanwhile. */
export async function sentOnTheWire<T>(work: () => Promise<T>): Promise<{ answers: T; sent: string[] }> {
  const sent: string[] = [];
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const text = typeof args[0] === "string" ? args[0] : (args[0] as { text?: string })?.text;
    sent.push(String(text).replace(/\s+/g, " ").slice(0, 100));
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  try {
    return { answers: await work(), sent };
  } finally {
    pg.Client.prototype.query = query;
  }
}
