// The webhook ingest's two paths (lib/webhooks/receive.ts): the one-statement path for the common
// case and the full transaction. The same scenarios run through both and must leave the same rows,
// the same follow-up jobs (lib/jobs/engine.ts) and give the same answers; the common case must take one statement; and a delivery that cannot
// get a connection before its deadline is refused with nothing recorded, then or later.
//
// These call receiveWebhook in this process (against the stack's database), so that the full path
// can be chosen; every other webhook test goes through the running app.
import { createHmac, randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { closeSql, resetWorld, sql, stack } from "../helpers/stack";
import { sentOnTheWire } from "../helpers/wire";

// Read by lib/env.ts when receive.ts first runs (below): a small pool and a short deadline, so the
// deadline test can exhaust the one and pass the other in a second.
process.env.WEBHOOK_DATABASE_POOL_SIZE = "1";
process.env.WEBHOOK_RECORD_DEADLINE_MS = "1000";
process.env.LOG_LEVEL = "silent";
const { receiveWebhook } = await import("@/lib/webhooks/receive");
const { recordInstallCreatedAtOnce } = await import("@/lib/webhooks/handlers/install-created");
const { recordInstallRevokedAtOnce } = await import("@/lib/webhooks/handlers/install-revoked");
const { storeInstallConfigAtOnce } = await import("@/lib/webhooks/handlers/install-config-updated");
const { ConnectionDeadlineError, ingestPool } = await import("@/lib/db/ingest-pool");
const { db } = await import("@/lib/db/client");
const { findInstallsDueForCheck } = await import("@/lib/jobs/install-check");

const enc = (s: string) => new TextEncoder().encode(s);
const sign = (body: string) => `sha256=${createHmac("sha256", stack.webhookSecret).update(body).digest("hex")}`;
const now = () => Math.floor(Date.now() / 1000);

type Delivery = { id?: string; type?: string; data: Record<string, unknown>; deliveredAt?: number };
function body(d: Delivery): string {
  return JSON.stringify({ id: d.id ?? `whd_${randomUUID()}`, type: d.type ?? "install.created", delivered_at: d.deliveredAt ?? now(), data: d.data });
}
const created = (installId: number, operatorId = 1002, id?: string, slug = "harbor-ev") => ({ id, data: { install_id: installId, operator_id: operatorId, slug } });
const revoked = (installId: number, operatorId = 1002, id?: string) => ({ id, type: "install.revoked", data: { install_id: installId, operator_id: operatorId } });
const configured = (installId: number, config: Record<string, unknown>, options: { id?: string; secondsAgo?: number } = {}) => ({
  id: options.id,
  type: "install.config.updated",
  deliveredAt: now() - (options.secondsAgo ?? 0),
  data: { install_id: installId, config },
});

/** Everything the ingest writes, without ids and times (they differ by construction). */
async function state() {
  return {
    installs: await sql(
      `SELECT install_id, client_id, operator_id, slug, consumer_key, status, granted_scopes, config, revoked_at IS NOT NULL AS revoked
       FROM installs ORDER BY install_id NULLS FIRST`,
    ),
    events: await sql(
      `SELECT i.install_id, e.from_status, e.to_status, e.cause, e.detail
       FROM install_events e JOIN installs i ON i.id = e.install_row_id ORDER BY i.install_id NULLS FIRST, e.occurred_at, e.to_status`,
    ),
    deliveries: await sql(
      `SELECT dedupe_key, event_type, install_id, delivered_at, outcome, detail, payload FROM webhook_deliveries ORDER BY dedupe_key`,
    ),
    grants: await sql(`SELECT i.install_id FROM token_grants g JOIN installs i ON i.id = g.install_row_id ORDER BY i.install_id`),
    incidents: await sql(
      `SELECT i.install_id, a.open, a.failures, a.closed_at IS NOT NULL AS closed FROM alert_incidents a JOIN installs i ON a.key = 'sync:' || i.id ORDER BY i.install_id`,
    ),
    // Follow-ups, enqueued in the delivery's transaction; named by the install's operator (row ids differ by construction).
    followUps: await sql(
      `SELECT j.name, j.state::text, j.priority, j.data->>'cause' AS cause, i.operator_id, i.install_id, j.singleton_key = i.id::text AS keyed_by_install
       FROM pgboss.job j LEFT JOIN installs i ON i.id::text = j.data->>'installRowId' ORDER BY i.operator_id, j.name`,
    ),
  };
}

/** A live install the redirect_uri stored before the app learned its install_id (docs/spec-gaps.md A2). */
async function liveInstallFromCallback(operatorId: number) {
  await sql(
    `INSERT INTO installs (id, client_id, operator_id, granted_scopes, status, updated_at)
     VALUES (gen_random_uuid(), $1, $2, '{charge-points:read}', 'ACTIVE', now())`,
    [process.env.OAUTH_CLIENT_ID, String(operatorId)],
  );
}

/** A token grant for a stored install, as the redirect_uri leaves one (sealed values: never read here). */
async function grantFor(installId: number) {
  await sql(
    `INSERT INTO token_grants (id, install_row_id, access_token_encrypted, refresh_token_encrypted, access_token_expires_at, scope, updated_at)
     SELECT gen_random_uuid(), id, 'sealed-access', 'sealed-refresh', now() + interval '1 hour', 'charge-points:read', now() FROM installs WHERE install_id = $1`,
    [installId],
  );
}
async function setStatus(installId: number, status: string) {
  await sql("UPDATE installs SET status = $2::install_status WHERE install_id = $1", [installId, status]);
}
/** A sync incident the install's failing syncs opened (lib/alerts/incidents.ts). */
async function openSyncIncident(installId: number) {
  await sql(
    `INSERT INTO alert_incidents (key, open, failures, first_failure_at, opened_at, updated_at)
     SELECT 'sync:' || id, true, 3, now(), now(), now() FROM installs WHERE install_id = $1`,
    [installId],
  );
}

type Step = Delivery | { setup: () => Promise<void> };
const SCENARIOS: Record<string, Step[]> = {
  "a first install.created": [created(9001)],
  "the same delivery twice": [created(9001, 1002, "whd_same"), created(9001, 1002, "whd_same")],
  "one install announced by two deliveries": [created(9001), created(9001)],
  "install.revoked before install.created": [revoked(9001), created(9001)],
  "a re-install supersedes the old install": [created(9001), created(9002)],
  "a late install.created for an older install": [created(9002), created(9001)],
  "install.created after the redirect_uri stored the install": [{ setup: () => liveInstallFromCallback(1002) }, created(9001)],
  "install.created naming another operator's install_id": [created(9001, 1002), created(9001, 1003)],
  "a re-consent of an active install with a grant, under a new slug": [created(9001), { setup: () => grantFor(9001) }, created(9001, 1002, undefined, "harbor-ev-north")],
  "a re-consent without a slug keeps the slug": [created(9001), { data: { install_id: 9001, operator_id: 1002 } }],
  "a re-consent of an install that needs re-authorization": [created(9001), { setup: () => grantFor(9001) }, { setup: () => setStatus(9001, "NEEDS_REAUTH") }, created(9001)],
  "a re-consent of an install that needs a re-install": [created(9001), { setup: () => setStatus(9001, "REINSTALL_NEEDED") }, created(9001)],
  "the same re-consent delivery twice": [created(9001), { setup: () => grantFor(9001) }, created(9001, 1002, "whd_again"), created(9001, 1002, "whd_again")],
  "install.revoked for an install_id never seen, while the operator's live install has none": [
    { setup: () => liveInstallFromCallback(1002) },
    revoked(9001),
  ],
  "an unknown event type, twice": [
    { id: "whd_renamed", type: "install.renamed", data: { install_id: 9001 } },
    { id: "whd_renamed", type: "install.renamed", data: { install_id: 9001 } },
  ],
  "install.created without operator_id": [{ data: { install_id: 9001 } }],
  "a re-install supersedes an install with a grant": [created(9001), { setup: () => grantFor(9001) }, created(9002)],
  "a re-install while the old install needs re-authorization": [created(9001), { setup: () => setStatus(9001, "NEEDS_REAUTH") }, created(9002)],
  "a re-install while the old install's sync incident is open": [created(9001), { setup: () => openSyncIncident(9001) }, created(9002)],
  "install.revoked for an active install with a grant": [created(9001), { setup: () => grantFor(9001) }, revoked(9001)],
  "install.revoked twice for one install, as two deliveries": [created(9001), revoked(9001), revoked(9001)],
  "the same install.revoked delivery twice": [created(9001), revoked(9001, 1002, "whd_rev"), revoked(9001, 1002, "whd_rev")],
  "install.revoked for an install_id never seen, with no live install": [revoked(9001)],
  "install.revoked for an install_id never seen, while the operator has another live install": [created(9002), revoked(9001)],
  "install.revoked for an install needing re-authorization": [created(9001), { setup: () => setStatus(9001, "NEEDS_REAUTH") }, revoked(9001)],
  "install.revoked for an install needing a re-install": [created(9001), { setup: () => setStatus(9001, "REINSTALL_NEEDED") }, revoked(9001)],
  "install.revoked for an install whose sync incident is open": [created(9001), { setup: () => openSyncIncident(9001) }, revoked(9001)],
  "install.revoked without install_id": [{ type: "install.revoked", data: { operator_id: 1002 } }],
  "install.config.updated for an active install": [created(9001), configured(9001, { syncCharges: true, nested: { a: [1, 2] } })],
  "install.config.updated, an older one after a newer one": [
    created(9001),
    configured(9001, { syncCharges: true }),
    configured(9001, { syncCharges: false }, { secondsAgo: 30 }),
  ],
  "install.config.updated for a revoked install": [created(9001), revoked(9001), configured(9001, { syncCharges: true })],
  "install.config.updated for an install never seen": [configured(9001, { syncCharges: true })],
  "the same install.config.updated delivery twice": [
    created(9001),
    configured(9001, { syncCharges: true }, { id: "whd_cfg" }),
    configured(9001, { syncCharges: true }, { id: "whd_cfg" }),
  ],
  "install.config.updated without a config object": [created(9001), { type: "install.config.updated", data: { install_id: 9001, config: "on" } }],
};

/** Runs the steps (each delivery's bytes made once, so both runs send the very same bodies). */
async function run(steps: (string | { setup: () => Promise<void> })[], fullPathOnly: boolean) {
  const answers: unknown[] = [];
  for (const step of steps) {
    if (typeof step !== "string") {
      await step.setup();
      continue;
    }
    try {
      const { status, body: answer } = await receiveWebhook(enc(step), sign(step), new Date(), { fullPathOnly });
      answers.push({ status, answer });
    } catch (error) {
      answers.push({ error: (error as Error).name }); // the route answers 503
    }
  }
  return { answers, ...(await state()) };
}

beforeEach(resetWorld);
afterAll(async () => {
  await closeSql();
  await ingestPool().end();
  await db().$disconnect();
});

describe("the one-statement path and the full transaction", () => {
  for (const [name, steps] of Object.entries(SCENARIOS)) {
    it(`leave the same rows and answers: ${name}`, async () => {
      const bodies = steps.map((step) => ("setup" in step ? step : body(step)));
      const fast = await run(bodies, false);
      await resetWorld();
      const full = await run(bodies, true);
      expect(fast).toEqual(full);
      expect(fast.deliveries.length).toBeGreaterThan(0);
    });
  }

  it("a delivery whose handler asks for a follow-up leaves it as a job, keyed by the install, in the same transaction", async () => {
    await liveInstallFromCallback(1002);
    const first = body(created(9001));
    await receiveWebhook(enc(first), sign(first));
    expect((await state()).followUps).toEqual([
      { name: "install-check", state: "created", priority: 1, cause: "webhook", operator_id: "1002", install_id: 9001, keyed_by_install: true },
    ]);
    // A copy of the delivery adds nothing (deduped with the delivery), nor does another delivery for
    // the same install while its check waits (one waiting job per install).
    await receiveWebhook(enc(first), sign(first));
    const second = body(created(9001));
    await receiveWebhook(enc(second), sign(second));
    expect((await state()).followUps).toHaveLength(1);
  });

  it("a follow-up that cannot be enqueued rolls the delivery back: nothing is recorded, the answer is an error", async () => {
    await liveInstallFromCallback(1002);
    // The follow-up's queue is gone (a broken deployment): the insert fails inside the transaction.
    await sql("ALTER TABLE pgboss.job_common ADD CONSTRAINT p12_test_refuse CHECK (name <> 'install-check') NOT VALID");
    try {
      const delivery = body(created(9001));
      await expect(receiveWebhook(enc(delivery), sign(delivery))).rejects.toThrow();
      expect(await sql("SELECT 1 FROM webhook_deliveries")).toEqual([]);
      expect(await sql("SELECT install_id FROM installs")).toEqual([{ install_id: null }]);
    } finally {
      await sql("ALTER TABLE pgboss.job_common DROP CONSTRAINT p12_test_refuse");
    }
  });

  it("the common case takes one statement", async () => {
    const client = new pg.Client({ connectionString: stack.databaseUrl });
    await client.connect();
    try {
      let statements = 0;
      const counting = { query: (text: string, values: unknown[]) => (statements++, client.query(text, values)) } as unknown as pg.Client;
      const raw = body(created(9001));
      const envelope = JSON.parse(raw) as { delivered_at: number };
      const delivery = { dedupeKey: "id:whd_one", installId: 9001, deliveredAt: new Date(envelope.delivered_at * 1000), payloadJson: raw };
      const parsed = { id: "whd_one", type: "install.created", delivered_at: delivery.deliveredAt, data: { install_id: 9001, operator_id: 1002, slug: "harbor-ev" } };
      expect(await recordInstallCreatedAtOnce(counting, delivery, parsed)).toBe("processed");
      expect(await recordInstallCreatedAtOnce(counting, delivery, parsed)).toBe("duplicate");
      expect(statements).toBe(2);
      expect(await sql("SELECT install_id, status FROM installs")).toEqual([{ install_id: 9001, status: "ACTIVE" }]);
      expect(await sql("SELECT to_status FROM install_events")).toEqual([{ to_status: "ACTIVE" }]);
    } finally {
      await client.end();
    }
  });
});

/** Runs a one-statement path on a client that counts the statements sent. */
async function countingStatements<T>(work: (client: pg.Client) => Promise<T>): Promise<{ result: T; statements: number }> {
  const client = new pg.Client({ connectionString: stack.databaseUrl });
  await client.connect();
  try {
    let statements = 0;
    const counting = { query: (text: string, values: unknown[]) => (statements++, client.query(text, values)) } as unknown as pg.Client;
    const result = await work(counting);
    return { result, statements };
  } finally {
    await client.end();
  }
}

/** The receiver's arguments to a one-statement path, as receiveWebhook builds them. */
function parsedDelivery(d: Delivery & { id: string }) {
  const deliveredAt = new Date((d.deliveredAt ?? now()) * 1000);
  const envelope = { id: d.id, type: d.type ?? "install.created", delivered_at: deliveredAt, data: d.data };
  const installId = typeof d.data.install_id === "number" ? d.data.install_id : null;
  return { delivery: { dedupeKey: `id:${d.id}`, installId, deliveredAt, payloadJson: JSON.stringify({ ...envelope, delivered_at: now() }) }, envelope };
}

describe("the one-statement paths of a re-install, a re-consent, install.revoked and install.config.updated", () => {
  it("a re-install takes one statement: the old install revoked, its grant deleted, the new one active", async () => {
    const first = body(created(9001));
    await receiveWebhook(enc(first), sign(first));
    await grantFor(9001);
    const reinstall = parsedDelivery({ ...created(9002), id: "whd_new" });
    const older = parsedDelivery({ ...created(9000), id: "whd_old" });
    const { result, statements } = await countingStatements(async (client) => [
      await recordInstallCreatedAtOnce(client, reinstall.delivery, reinstall.envelope),
      await recordInstallCreatedAtOnce(client, reinstall.delivery, reinstall.envelope),
      await recordInstallCreatedAtOnce(client, older.delivery, older.envelope),
    ]);
    expect(result).toEqual(["processed", "duplicate", "processed"]);
    expect(statements).toBe(3);
    expect(await sql("SELECT install_id, status FROM installs ORDER BY install_id")).toEqual([
      { install_id: 9000, status: "REVOKED" },
      { install_id: 9001, status: "REVOKED" },
      { install_id: 9002, status: "ACTIVE" },
    ]);
    expect(await sql("SELECT count(*)::int AS n FROM token_grants")).toEqual([{ n: 0 }]);
    expect(
      await sql("SELECT i.install_id, e.from_status, e.to_status, e.detail FROM install_events e JOIN installs i ON i.id = e.install_row_id ORDER BY i.install_id, e.occurred_at, e.to_status"),
    ).toEqual([
      { install_id: 9000, from_status: null, to_status: "REVOKED", detail: "older than live install 9002" },
      { install_id: 9001, from_status: null, to_status: "ACTIVE", detail: "install recorded" },
      { install_id: 9001, from_status: "ACTIVE", to_status: "REVOKED", detail: "superseded by install 9002" },
      { install_id: 9002, from_status: null, to_status: "ACTIVE", detail: "install recorded" },
    ]);
  });

  it("a re-consent takes one statement, which leaves the install due for the sweep's check when its job cannot go in with it; a copy asks for nothing", async () => {
    const first = body(created(9001));
    await receiveWebhook(enc(first), sign(first));
    await grantFor(9001);
    // Checked a minute ago: not due for the sweep until the re-consent asks for a check.
    await sql("UPDATE installs SET last_reconciled_at = now() - interval '1 minute'");
    const installRowId = (await sql<{ id: string }>("SELECT id FROM installs WHERE install_id = 9001"))[0]!.id;
    expect(await findInstallsDueForCheck()).toEqual([]);

    // The job engine refuses the job (or its insert is not made yet): the statement returns the
    // install to check, for the receiver to enqueue after the commit.
    const again = parsedDelivery({ ...created(9001, 1002, undefined, "harbor-ev-north"), id: "whd_again" });
    await sql("ALTER TABLE pgboss.job_common ADD CONSTRAINT p12_test_refuse CHECK (name <> 'install-check') NOT VALID");
    const { result, statements } = await countingStatements(async (client) => [
      await recordInstallCreatedAtOnce(client, again.delivery, again.envelope),
      await recordInstallCreatedAtOnce(client, again.delivery, again.envelope),
    ]).finally(() => sql("ALTER TABLE pgboss.job_common DROP CONSTRAINT p12_test_refuse"));
    expect(result).toEqual([{ outcome: "processed", followUp: { kind: "install-check", installRowId } }, "duplicate"]);
    expect(statements).toBe(2);
    // The process "died" before enqueueing the job (nothing here enqueues it): the statement alone
    // recorded the delivery, learned the slug, and made the install the sweep's first due check.
    expect(await sql("SELECT dedupe_key, detail FROM webhook_deliveries ORDER BY received_at")).toEqual([
      { dedupe_key: expect.stringMatching(/^id:/), detail: "install 9001 recorded" },
      { dedupe_key: "id:whd_again", detail: "install 9001 already known" },
    ]);
    expect(await sql("SELECT slug, status FROM installs")).toEqual([{ slug: "harbor-ev-north", status: "ACTIVE" }]);
    expect((await state()).followUps).toEqual([]);
    expect(await findInstallsDueForCheck()).toEqual([installRowId]);
  });

  it("a re-consent's check is enqueued once the statement has committed; a job engine that refuses it loses nothing", async () => {
    const first = body(created(9001));
    await receiveWebhook(enc(first), sign(first));
    await grantFor(9001);
    await sql("UPDATE installs SET last_reconciled_at = now() - interval '1 minute'");
    const installRowId = (await sql<{ id: string }>("SELECT id FROM installs WHERE install_id = 9001"))[0]!.id;

    // The job engine refuses the job (a broken deployment): the delivery is recorded all the same,
    // and answered 2xx (the service never sends it again, contract §6); the sweep does the check.
    await sql("ALTER TABLE pgboss.job_common ADD CONSTRAINT p12_test_refuse CHECK (name <> 'install-check') NOT VALID");
    try {
      const refused = body(created(9001));
      expect((await receiveWebhook(enc(refused), sign(refused))).body).toEqual({ status: "processed" });
    } finally {
      await sql("ALTER TABLE pgboss.job_common DROP CONSTRAINT p12_test_refuse");
    }
    expect(await sql("SELECT count(*)::int AS n FROM webhook_deliveries WHERE detail = 'install 9001 already known'")).toEqual([{ n: 1 }]);
    expect((await state()).followUps).toEqual([]);
    expect(await findInstallsDueForCheck()).toEqual([installRowId]);

    // With the engine back, the next re-consent's check is enqueued at once; its copy adds nothing.
    const next = body(created(9001));
    expect((await receiveWebhook(enc(next), sign(next))).body).toEqual({ status: "processed" });
    expect((await receiveWebhook(enc(next), sign(next))).body).toEqual({ status: "duplicate" });
    expect((await state()).followUps).toEqual([
      { name: "install-check", state: "created", priority: 1, cause: "webhook", operator_id: "1002", install_id: 9001, keyed_by_install: true },
    ]);
  });

  it("every install.created is one round trip to the database, a re-consent's check included (counted on the wire)", async () => {
    // Re-consents first, uncounted: the job engine starts, and pg-boss makes its insert of the check
    // (lib/jobs/enqueue.ts, followUpStatement), once per process, not per delivery.
    const first = body(created(9001));
    await receiveWebhook(enc(first), sign(first));
    await grantFor(9001);
    for (const warm of [body(created(9001)), body(created(9001))]) await receiveWebhook(enc(warm), sign(warm));
    await sql("DELETE FROM pgboss.job WHERE name = 'install-check'");

    const reconsent = body(created(9001, 1002, "whd_reconsent", "harbor-ev-north"));
    const firstInstall = body(created(9101, 1003));
    const { answers, sent } = await sentOnTheWire(async () => [
      (await receiveWebhook(enc(reconsent), sign(reconsent))).body,
      (await receiveWebhook(enc(reconsent), sign(reconsent))).body,
      (await receiveWebhook(enc(firstInstall), sign(firstInstall))).body,
    ]);
    expect(answers).toEqual([{ status: "processed" }, { status: "duplicate" }, { status: "processed" }]);
    // One each: the re-consent, its copy, a first install.
    expect(sent, sent.join("\n")).toHaveLength(3);
    expect(await sql("SELECT slug FROM installs WHERE install_id = 9001")).toEqual([{ slug: "harbor-ev-north" }]);
    expect((await state()).followUps).toEqual([
      { name: "install-check", state: "created", priority: 1, cause: "webhook", operator_id: "1002", install_id: 9001, keyed_by_install: true },
    ]);
  });

  it("a job engine that is slow to take a re-consent's check does not hold the answer past the delivery's deadline", async () => {
    const first = body(created(9001));
    await receiveWebhook(enc(first), sign(first));
    // Another transaction holds the job table: the check's insert waits for it.
    const holder = new pg.Client({ connectionString: stack.databaseUrl });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("LOCK TABLE pgboss.job IN EXCLUSIVE MODE");
      const again = body(created(9001));
      const started = Date.now();
      expect((await receiveWebhook(enc(again), sign(again), new Date(), { arrivedAt: started })).body).toEqual({ status: "processed" });
      // WEBHOOK_RECORD_DEADLINE_MS is 1 s in this file.
      expect(Date.now() - started).toBeLessThan(1_500);
      expect(await sql("SELECT count(*)::int AS n FROM webhook_deliveries WHERE detail = 'install 9001 already known'")).toEqual([{ n: 1 }]);
      await holder.query("COMMIT");
    } finally {
      await holder.end();
    }
    // The enqueue, left to finish on its own, lands once the table is free.
    await expect.poll(async () => (await state()).followUps.length, { timeout: 5_000 }).toBe(1);
  });

  it("a re-consent of an install that needs re-authorization is one statement with its check, or nothing recorded; another operator's install_id is the full transaction's", async () => {
    const first = body(created(9001));
    await receiveWebhook(enc(first), sign(first));
    // Re-consents of the active install first: pg-boss's insert of the check is made once one needs it.
    for (const warm of [body(created(9001)), body(created(9001))]) await receiveWebhook(enc(warm), sign(warm));
    await sql("DELETE FROM pgboss.job WHERE name = 'install-check'");
    await setStatus(9001, "NEEDS_REAUTH");
    // Probed a minute ago: the probe's throttle, which the re-consent must leave as it is.
    await sql("UPDATE installs SET last_reconciled_at = now() - interval '1 minute'");
    const again = parsedDelivery({ ...created(9001, 1002, undefined, "harbor-ev-north"), id: "whd_again" });
    const other = parsedDelivery({ ...created(9001, 1003), id: "whd_other" });
    const { result, statements } = await countingStatements(async (client) => [
      await recordInstallCreatedAtOnce(client, again.delivery, again.envelope),
      await recordInstallCreatedAtOnce(client, again.delivery, again.envelope),
      await recordInstallCreatedAtOnce(client, other.delivery, other.envelope),
    ]);
    expect({ result, statements }).toEqual({ result: ["processed", "duplicate", "full"], statements: 3 });
    expect(await sql("SELECT slug, status, last_reconciled_at > now() - interval '2 minutes' AS throttled FROM installs")).toEqual([
      { slug: "harbor-ev-north", status: "NEEDS_REAUTH", throttled: true },
    ]);
    expect(await sql("SELECT detail FROM webhook_deliveries WHERE dedupe_key = 'id:whd_again'")).toEqual([{ detail: "install 9001 already known" }]);
    expect((await state()).followUps).toEqual([
      { name: "install-check", state: "created", priority: 1, cause: "webhook", operator_id: "1002", install_id: 9001, keyed_by_install: true },
    ]);

    // Its check is its only request (no marker bypasses the throttle): a job that cannot be enqueued
    // leaves nothing recorded, and the answer is an error (503), as in the full transaction.
    await sql("DELETE FROM pgboss.job WHERE name = 'install-check'");
    await sql("ALTER TABLE pgboss.job_common ADD CONSTRAINT p12_test_refuse CHECK (name <> 'install-check') NOT VALID");
    try {
      const refused = body(created(9001, 1002, "whd_refused"));
      await expect(receiveWebhook(enc(refused), sign(refused))).rejects.toThrow();
      expect(await sql("SELECT 1 FROM webhook_deliveries WHERE dedupe_key = 'id:whd_refused'")).toEqual([]);
    } finally {
      await sql("ALTER TABLE pgboss.job_common DROP CONSTRAINT p12_test_refuse");
    }
  });

  it("an install that moves while its re-consent waits for the row lock is left to the full transaction, which sees the move", async () => {
    const first = body(created(9001));
    await receiveWebhook(enc(first), sign(first));
    const holder = new pg.Client({ connectionString: stack.databaseUrl });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT 1 FROM installs WHERE install_id = 9001 FOR UPDATE");
      const again = body(created(9001));
      const answer = receiveWebhook(enc(again), sign(again));
      await new Promise((resolve) => setTimeout(resolve, 300));
      // Flagged meanwhile: the one-statement path read ACTIVE, and must not clear the probe's throttle.
      await holder.query("UPDATE installs SET status = 'NEEDS_REAUTH', last_reconciled_at = now() WHERE install_id = 9001");
      await holder.query("COMMIT");
      expect((await answer).body).toEqual({ status: "processed" });
    } finally {
      await holder.end();
    }
    expect(await sql("SELECT status, last_reconciled_at IS NOT NULL AS throttled FROM installs")).toEqual([{ status: "NEEDS_REAUTH", throttled: true }]);
    expect(await sql("SELECT detail FROM webhook_deliveries ORDER BY received_at")).toEqual([{ detail: "install 9001 recorded" }, { detail: "install 9001 already known" }]);
    expect((await state()).followUps).toHaveLength(1);
  });

  it("install.revoked takes one statement for an active install, one for an install already revoked, one for a copy", async () => {
    const first = body(created(9001));
    await receiveWebhook(enc(first), sign(first));
    await grantFor(9001);
    const revoke = parsedDelivery({ ...revoked(9001), id: "whd_rev_1" });
    const again = parsedDelivery({ ...revoked(9001), id: "whd_rev_2" });
    const { result, statements } = await countingStatements(async (client) => [
      await recordInstallRevokedAtOnce(client, revoke.delivery, revoke.envelope),
      await recordInstallRevokedAtOnce(client, revoke.delivery, revoke.envelope),
      await recordInstallRevokedAtOnce(client, again.delivery, again.envelope),
    ]);
    expect(result).toEqual(["processed", "duplicate", "processed"]);
    expect(statements).toBe(3);
    expect(await sql("SELECT status FROM installs")).toEqual([{ status: "REVOKED" }]);
    expect(await sql("SELECT count(*)::int AS n FROM token_grants")).toEqual([{ n: 0 }]);
    expect(await sql("SELECT from_status, to_status, detail FROM install_events ORDER BY occurred_at, to_status")).toEqual([
      { from_status: null, to_status: "ACTIVE", detail: "install recorded" },
      { from_status: "ACTIVE", to_status: "REVOKED", detail: "install.revoked" },
    ]);
    expect(await sql("SELECT dedupe_key, detail FROM webhook_deliveries WHERE event_type = 'install.revoked' ORDER BY dedupe_key")).toEqual([
      { dedupe_key: "id:whd_rev_1", detail: "install 9001 revoked" },
      { dedupe_key: "id:whd_rev_2", detail: "install 9001 already revoked" },
    ]);
  });

  it("install.revoked answers \"full\" and writes nothing for an install that needs re-authorization", async () => {
    const first = body(created(9001));
    await receiveWebhook(enc(first), sign(first));
    await setStatus(9001, "NEEDS_REAUTH");
    const revoke = parsedDelivery({ ...revoked(9001), id: "whd_rev_1" });
    const { result, statements } = await countingStatements((client) => recordInstallRevokedAtOnce(client, revoke.delivery, revoke.envelope));
    expect({ result, statements }).toEqual({ result: "full", statements: 1 });
    expect(await sql("SELECT count(*)::int AS n FROM webhook_deliveries WHERE event_type = 'install.revoked'")).toEqual([{ n: 0 }]);
    expect(await sql("SELECT status FROM installs")).toEqual([{ status: "NEEDS_REAUTH" }]);
  });

  it("install.config.updated takes one statement whether it stores the configuration or not", async () => {
    const first = body(created(9001));
    await receiveWebhook(enc(first), sign(first));
    const newer = parsedDelivery({ ...configured(9001, { syncCharges: true }), id: "whd_cfg_1" });
    const older = parsedDelivery({ ...configured(9001, { syncCharges: false }, { secondsAgo: 30 }), id: "whd_cfg_2" });
    const { result, statements } = await countingStatements(async (client) => [
      await storeInstallConfigAtOnce(client, newer.delivery, newer.envelope),
      await storeInstallConfigAtOnce(client, newer.delivery, newer.envelope),
      await storeInstallConfigAtOnce(client, older.delivery, older.envelope),
    ]);
    expect(result).toEqual(["processed", "duplicate", "processed"]);
    expect(statements).toBe(3);
    expect(await sql("SELECT config FROM installs")).toEqual([{ config: { syncCharges: true } }]);
    expect(await sql("SELECT dedupe_key, detail FROM webhook_deliveries WHERE event_type = 'install.config.updated' ORDER BY dedupe_key")).toEqual([
      { dedupe_key: "id:whd_cfg_1", detail: "configuration of install 9001 stored" },
      { dedupe_key: "id:whd_cfg_2", detail: "install 9001 unknown, revoked, or has a newer configuration" },
    ]);
  });

  it("an install that moves while its revocation waits for the row lock is left to the full transaction, which sees the move", async () => {
    const first = body(created(9001));
    await receiveWebhook(enc(first), sign(first));
    // Another transaction holds the install's row (as a 403 NEEDS_REAUTH being recorded would) ...
    const holder = new pg.Client({ connectionString: stack.databaseUrl });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT 1 FROM installs WHERE install_id = 9001 FOR UPDATE");
      const revoke = body(revoked(9001));
      const answer = receiveWebhook(enc(revoke), sign(revoke));
      await new Promise((resolve) => setTimeout(resolve, 300));
      // ... and flags it: the one-statement path read ACTIVE, and must not write its move over this.
      await holder.query("UPDATE installs SET status = 'NEEDS_REAUTH' WHERE install_id = 9001");
      await holder.query("COMMIT");
      expect((await answer).body).toEqual({ status: "processed" });
    } finally {
      await holder.end();
    }
    expect(await sql("SELECT status FROM installs")).toEqual([{ status: "REVOKED" }]);
    expect(await sql("SELECT from_status, to_status FROM install_events ORDER BY occurred_at, to_status")).toEqual([
      { from_status: null, to_status: "ACTIVE" },
      { from_status: "NEEDS_REAUTH", to_status: "REVOKED" },
    ]);
    expect(await sql("SELECT count(*)::int AS n FROM webhook_deliveries WHERE event_type = 'install.revoked'")).toEqual([{ n: 1 }]);
  });
});

describe("a delivery that cannot get a connection before its deadline", () => {
  it("is refused, and is not recorded when a connection frees up later", async () => {
    // Operator 1002's lock (lib/installs/register.ts) held elsewhere: the first delivery holds the
    // pool's only connection while it waits for it.
    const holder = new pg.Client({ connectionString: stack.databaseUrl });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`install:${process.env.OAUTH_CLIENT_ID}:1002`]);
      const first = body(created(9001, 1002));
      const blocked = receiveWebhook(enc(first), sign(first));
      await new Promise((resolve) => setTimeout(resolve, 200));

      // Two more, one on each path (the full transaction waits on the same pool), both refused at
      // their deadline.
      const second = body(created(9002, 1003));
      const third = body(created(9003, 1004));
      const started = Date.now();
      const refused = await Promise.allSettled([
        receiveWebhook(enc(second), sign(second), new Date(), { arrivedAt: started }),
        receiveWebhook(enc(third), sign(third), new Date(), { arrivedAt: started, fullPathOnly: true }),
      ]);
      expect(refused.map((r) => (r.status === "rejected" && r.reason instanceof ConnectionDeadlineError ? "refused" : r))).toEqual(["refused", "refused"]);
      expect(Date.now() - started).toBeLessThan(1_500);

      await holder.query("COMMIT"); // the first delivery goes through, and the pool's connection frees up
      expect((await blocked).body).toEqual({ status: "processed" });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await sql("SELECT install_id FROM installs ORDER BY install_id")).toEqual([{ install_id: 9001 }]);
      expect(await sql("SELECT install_id FROM webhook_deliveries ORDER BY install_id")).toEqual([{ install_id: 9001 }]);
    } finally {
      await holder.end();
    }
  });

  it("a refused delivery's id is listed in the staff webhook log for a replay; an unsigned body's claimed id is not", async () => {
    const { refusedDeliveryId } = await import("@/lib/webhooks/receive");
    const { noteRejection, flushRejections } = await import("@/lib/webhooks/rejections");
    const refused = [body(created(9002, 1003, "whd_lost_1")), body(created(9003, 1004, "whd_lost_2"))];
    const forged = body(created(9004, 1005, "whd_forged"));
    const at = new Date();
    for (const b of refused) noteRejection("not_recorded", at, refusedDeliveryId(enc(b), sign(b)));
    noteRejection("not_recorded", at, refusedDeliveryId(enc(forged), "sha256=" + "0".repeat(64)));
    await flushRejections();
    const { fetchWebhookLog, readWebhookLogQuery } = await import("@/lib/admin/webhook-log");
    const log = await fetchWebhookLog(readWebhookLogQuery({ outcome: "rejected" }));
    expect(log.rejections.map((r) => ({ reason: r.reason, count: r.count, deliveryIds: r.deliveryIds }))).toEqual([
      { reason: "not_recorded", count: 3, deliveryIds: ["whd_lost_1", "whd_lost_2"] },
    ]);
  });
});
