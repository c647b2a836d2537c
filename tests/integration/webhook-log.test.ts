// The console's webhook log (/admin/webhooks, lib/admin/webhook-log.ts): every delivery the app
// recorded, and the ones it refused before recording anything, counted per minute and reason
// (lib/webhooks/rejections.ts). A refusal's answer is the same as before; a flood of them costs a
// few rows, not one per request.
import { createHmac, randomUUID } from "node:crypto";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { signInStaffWithFetch } from "../helpers/staff-sign-in";
import { closeSql, resetWorld, sql, stack } from "../helpers/stack";
import { scaled } from "../helpers/time-scale";

const HEADER = "X-Volt-Signature";
const now = () => Math.floor(Date.now() / 1000);
const sign = (body: string, secret = stack.webhookSecret) => `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
const envelope = (overrides: Record<string, unknown> = {}) =>
  JSON.stringify({ id: `whd_${randomUUID()}`, type: "install.created", delivered_at: now(), data: { install_id: 9101, operator_id: 1002, slug: "harbor-ev" }, ...overrides });
const deliver = (body: string, headers: Record<string, string> = {}) =>
  fetch(`${stack.appUrl}/api/webhooks`, { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body });

/** The refusal counts as written, per reason (they are written every 2 s: wait for the expected ones). */
async function refusalsWhen(expected: Record<string, number>): Promise<Record<string, { count: number; rows: number }>> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const rows = await sql<{ reason: string; count: number; rows: number }>(
      "SELECT reason, sum(count)::int AS count, count(*)::int AS rows FROM webhook_rejections GROUP BY reason",
    );
    const byReason = Object.fromEntries(rows.map((r) => [r.reason, { count: r.count, rows: r.rows }]));
    if (Object.entries(expected).every(([reason, n]) => (byReason[reason]?.count ?? 0) >= n) || Date.now() > deadline) return byReason;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * The app counts refusals in memory and writes them every 2 s (lib/webhooks/rejections.ts), so counts
 * from the tests before this one can still arrive after the world's reset: let them land, then empty
 * the table, before a test that counts.
 */
async function quietRefusals(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  await sql("TRUNCATE webhook_rejections");
}

let staffCookie: string;
// The world's reset ends every session too: a staff member signs in again for each test.
beforeEach(async () => {
  await resetWorld();
  const signIn = await signInStaffWithFetch(process.env.STAFF_DEV_EMAIL!, process.env.STAFF_DEV_PASSWORD!);
  expect(signIn.outcome).toBe("ok");
  staffCookie = signIn.sessionCookie!;
});
afterAll(closeSql);

const logPage = async (query = "") => {
  const response = await fetch(`${stack.appUrl}/admin/webhooks${query}`, { headers: { cookie: staffCookie } });
  return { status: response.status, html: await response.text() };
};

describe("the webhook log", () => {
  it("counts each refusal by its reason, with the answer the service got unchanged, and lists them for staff", async () => {
    await quietRefusals();
    const body = envelope();
    expect((await deliver(body, { [HEADER]: sign(body, "not-the-webhook-secret-at-all") })).status).toBe(401);
    expect((await deliver(body, { [HEADER]: sign(body, "not-the-webhook-secret-at-all") })).status).toBe(401);
    expect((await deliver(body)).status).toBe(401);
    const stale = envelope({ delivered_at: now() - 3600 });
    expect((await deliver(stale, { [HEADER]: sign(stale) })).status).toBe(400);
    const tooLarge = "x".repeat(300 * 1024);
    expect((await deliver(tooLarge, { [HEADER]: sign(tooLarge) })).status).toBe(413);

    const counts = await refusalsWhen({ invalid_signature: 2, missing_signature: 1, stale_delivery: 1, body_too_large: 1 });
    expect(counts).toEqual({
      invalid_signature: { count: 2, rows: 1 },
      missing_signature: { count: 1, rows: 1 },
      stale_delivery: { count: 1, rows: 1 },
      body_too_large: { count: 1, rows: 1 },
    });
    // Nothing of the sender's is stored: not a delivery row, and no column for a body or a header.
    expect(await sql("SELECT 1 FROM webhook_deliveries")).toEqual([]);

    const page = await logPage("?outcome=rejected");
    expect(page.status).toBe(200);
    for (const reason of ["invalid_signature", "missing_signature", "stale_delivery", "body_too_large"]) expect(page.html).toContain(`data-reason="${reason}"`);
    expect(page.html).toContain("The signature does not match the webhook secret");
    const onlyStale = await logPage("?outcome=rejected&reason=stale_delivery");
    expect(onlyStale.html).toContain('data-reason="stale_delivery"');
    expect(onlyStale.html).not.toContain('data-reason="invalid_signature"');
  });

  it("a flood of 600 forged deliveries: every one answered 401, counted in a row or two, not 600", { timeout: scaled(60_000) }, async () => {
    await quietRefusals();
    const forged = envelope();
    const header = { [HEADER]: sign(forged, "a-forger-who-does-not-know-the-secret") };
    const statuses: number[] = [];
    for (let batch = 0; batch < 12; batch++) {
      statuses.push(...(await Promise.all(Array.from({ length: 50 }, async () => (await deliver(forged, header)).status))));
    }
    expect(statuses.filter((status) => status !== 401)).toEqual([]);
    const counts = await refusalsWhen({ invalid_signature: 600 });
    expect(counts.invalid_signature?.count).toBe(600);
    // One row per minute the flood spanned (it may cross a minute's end).
    expect(counts.invalid_signature?.rows).toBeLessThanOrEqual(2);
  });

  it("finds a recorded delivery by its id, and an install's deliveries by its install_id", async () => {
    const first = envelope({ data: { install_id: 9101, operator_id: 1002, slug: "harbor-ev" } });
    const other = envelope({ type: "install.something_new", data: { install_id: 9102 } });
    expect((await deliver(first, { [HEADER]: sign(first) })).status).toBe(200);
    expect((await deliver(other, { [HEADER]: sign(other) })).status).toBe(200);
    const firstId = (JSON.parse(first) as { id: string }).id;
    const otherId = (JSON.parse(other) as { id: string }).id;

    const all = await logPage();
    expect(all.html).toContain(`data-delivery-id="${firstId}"`);
    expect(all.html).toContain(`data-delivery-id="${otherId}"`);

    const byId = await logPage(`?q=${firstId}`);
    expect(byId.html).toContain(`data-delivery-id="${firstId}"`);
    expect(byId.html).not.toContain(`data-delivery-id="${otherId}"`);
    expect(byId.html).toContain("Accepted and applied");

    const byInstall = await logPage("?q=9102");
    expect(byInstall.html).toContain(`data-delivery-id="${otherId}"`);
    expect(byInstall.html).not.toContain(`data-delivery-id="${firstId}"`);
    expect(byInstall.html).toContain("the app does not act on");
  });

  it("a bad query string gives the whole log, never an error; the log needs a staff session", async () => {
    for (const query of ["?outcome=drop%20table", "?reason=nope&after=123_notauuid", `?q=${"%00".repeat(50)}`, "?q=" + "9".repeat(300)]) {
      expect((await logPage(query)).status).toBe(200);
    }
    const anonymous = await fetch(`${stack.appUrl}/admin/webhooks`, { redirect: "manual" });
    expect(anonymous.status).not.toBe(200);
    expect(await anonymous.text()).not.toContain("webhook-deliveries");
  });
});
