// Admission to the webhook ingest (lib/db/ingest-pool.ts, admitBefore; docs/spec-gaps.md A201): under a
// burst the database cannot record before the deadline, what it cannot record in time is refused
// before the deadline with nothing recorded, and no delivery is started so late that its 200 comes
// after the deadline (contract §6: the service counts an answer after 10 s as a failure).
//
// In this process against the stack's database, as tests/integration/webhook-paths.test.ts does, with a
// pool of one connection, a deadline of 1 s and every recording slowed in the database (a trigger that
// sleeps), so that the instance's pace is known and a burst of a dozen is more than it can record.
import { createHmac } from "node:crypto";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { closeSql, resetWorld, sql, stack } from "../helpers/stack";
import { scaled } from "../helpers/time-scale";

// Read by lib/env.ts when receive.ts first runs (below).
process.env.WEBHOOK_DATABASE_POOL_SIZE = "1";
process.env.WEBHOOK_RECORD_DEADLINE_MS = "1000";
process.env.LOG_LEVEL = "silent";
const { receiveWebhook } = await import("@/lib/webhooks/receive");
const { ConnectionDeadlineError } = await import("@/lib/db/ingest-pool");

const DEADLINE_MS = 1000;
/** Each delivery's recording, slowed in the database: three fit in the deadline, four do not. */
const SLOW_SECONDS = 0.3;

const enc = (s: string) => new TextEncoder().encode(s);
const sign = (body: string) => `sha256=${createHmac("sha256", stack.webhookSecret).update(body).digest("hex")}`;
const created = (n: number) =>
  JSON.stringify({ id: `whd_adm_${n}`, type: "install.created", delivered_at: Math.floor(Date.now() / 1000), data: { install_id: 80_000 + n, operator_id: 80_000 + n, slug: `adm-${n}` } });

/** One delivery's answer, as the route gives it (a ConnectionDeadlineError is its 503), and when it came. */
async function deliver(n: number, arrivedAt: number): Promise<{ n: number; status: number; ms: number }> {
  const body = created(n);
  const status = await receiveWebhook(enc(body), sign(body), new Date(), { arrivedAt }).then(
    (result) => result.status,
    (error: unknown) => {
      if (error instanceof ConnectionDeadlineError) return 503;
      throw error;
    },
  );
  return { n, status, ms: Date.now() - arrivedAt };
}

const dropSlowdown = () => sql("DROP TRIGGER IF EXISTS test_slow_recording ON webhook_deliveries; DROP FUNCTION IF EXISTS test_slow_recording()");

beforeEach(resetWorld);
afterAll(async () => {
  await dropSlowdown();
  await closeSql();
});

describe("a burst the database cannot record before the deadline", () => {
  it("what cannot be recorded in time is refused before the deadline; every 200 comes by the deadline and is recorded exactly once", { timeout: scaled(30_000) }, async () => {
    await dropSlowdown();
    await sql(`CREATE FUNCTION test_slow_recording() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(${SLOW_SECONDS}); RETURN NEW; END $$`);
    await sql("CREATE TRIGGER test_slow_recording BEFORE INSERT ON webhook_deliveries FOR EACH ROW EXECUTE FUNCTION test_slow_recording()");
    try {
      // The instance learns its pace from the deliveries it records.
      for (const n of [0, 1]) expect((await deliver(n, Date.now())).status).toBe(200);

      // A dozen at once, on the one-statement path (the full transaction's wait is cut the same way,
      // but once Prisma has its connection the transaction's length is its own: TRANSACTION_LIMITS).
      const arrivedAt = Date.now();
      const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => deliver(10 + i, arrivedAt)));
      const answered = answers.filter((a) => a.status === 200);
      const refused = answers.filter((a) => a.status === 503);
      expect(answered.length + refused.length).toBe(12);
      expect(answered.length).toBeGreaterThan(0);
      expect(refused.length).toBeGreaterThan(0);
      // None answered after the deadline: a 200 after it would be a failure the service never retries.
      expect(answers.filter((a) => a.ms > DEADLINE_MS)).toEqual([]);
      // The refusals come before the deadline (when a recording could no longer end by it), not at it.
      expect(refused.filter((a) => a.ms >= DEADLINE_MS)).toEqual([]);

      // Every 200 recorded exactly once with its install, no 503 recorded at all, then or later.
      await new Promise((resolve) => setTimeout(resolve, 2 * SLOW_SECONDS * 1000));
      const expected = [0, 1, ...answered.map((a) => a.n)].map((n) => `id:whd_adm_${n}`).sort();
      const rows = await sql<{ dedupe_key: string }>("SELECT dedupe_key FROM webhook_deliveries ORDER BY dedupe_key");
      expect(rows.map((r) => r.dedupe_key)).toEqual(expected);
      expect(await sql("SELECT count(*)::int AS n FROM installs")).toEqual([{ n: expected.length }]);
    } finally {
      await dropSlowdown();
    }
  });
});
