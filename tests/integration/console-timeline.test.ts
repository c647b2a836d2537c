// One install's page in the staff console (issue 14): its timeline merges every source (state
// changes, webhooks, sync runs, staff actions, token refreshes) newest first, and the page says where
// its sync and its rate budget stand, from the app's own records.
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { signInStaffWithFetch } from "../helpers/staff-sign-in";
import { closeSql, installViaPortal, resetWorld, sql, stack } from "../helpers/stack";

beforeEach(resetWorld);
afterAll(closeSql);

const required = (name: string) => process.env[name] ?? "";

/** The timeline's entries as the page lists them: kind and text, top to bottom. */
function timelineOf(html: string): { kind: string; text: string }[] {
  const list = /data-testid="timeline">([\s\S]*?)<\/ol>/.exec(html)?.[1] ?? "";
  return [...list.matchAll(/<li[^>]*data-kind="([a-z]+)"[^>]*>([\s\S]*?)<\/li>/g)].map((m) => ({ kind: m[1]!, text: m[2]!.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ").trim() }));
}

describe("an install's page", () => {
  it("shows the install, its webhook, its sync, a staff action and its tokens in one timeline, newest first, with its sync and budget", async () => {
    const install = await installViaPortal(1001);
    // The sandbox announces the install; wait for the delivery to be recorded.
    await expect.poll(async () => (await sql("SELECT 1 FROM webhook_deliveries WHERE install_id = $1", [install.installId])).length, { timeout: 10_000 }).toBe(1);
    // The first sync was queued by the callback; a scheduler's call works it (no worker runs here).
    const run = await fetch(`${stack.appUrl}/api/cron/sync`, { method: "POST", headers: { Authorization: `Bearer ${required("CRON_SECRET")}` } });
    expect(run.status).toBe(200);
    await sql(
      "INSERT INTO staff_actions (id, staff_email, staff_role, action, install_row_id, install_id, outcome, detail, requested_at, finished_at) VALUES (gen_random_uuid(), 'staff@example.com', 'operator', 'reconcile', $1, $2, 'consistent', 'The install is as the app thinks.', now() + interval '1 second', now() + interval '1 second')",
      [install.installRowId, install.installId],
    );

    const signIn = await signInStaffWithFetch(required("STAFF_DEV_EMAIL"), required("STAFF_DEV_PASSWORD"));
    const response = await fetch(`${stack.appUrl}/admin/installs/${install.installRowId}`, { headers: { cookie: signIn.sessionCookie! } });
    expect(response.status).toBe(200);
    // React separates adjacent text with empty comments; the text staff read has none.
    const html = (await response.text()).replaceAll("<!-- -->", "");
    const timeline = timelineOf(html);

    const kinds = new Set(timeline.map((entry) => entry.kind));
    expect([...kinds].sort()).toEqual(["staff", "state", "sync", "webhook"]);
    expect(timeline[0]).toMatchObject({ kind: "staff" });
    expect(timeline[0]!.text).toContain("Reconcile now by staff@example.com: consistent");
    expect(timeline.find((entry) => entry.kind === "webhook")!.text).toContain("install.created: processed");
    expect(timeline.filter((entry) => entry.kind === "sync").map((entry) => entry.text)).toEqual(
      expect.arrayContaining([expect.stringContaining("Sync of charge points"), expect.stringContaining("Sync of charges")]),
    );
    // Newest first, whichever source an entry came from (the webhook may be recorded before or after
    // the callback's state change: the service sends it on its own schedule).
    const times = timeline.map((entry) => /\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/.exec(entry.text)![0]);
    expect(times).toEqual([...times].sort().reverse());
    expect(timeline.find((entry) => entry.kind === "state")!.text).toContain("Connected");

    // Where the sync stands, per resource, and the budget the sync used, from the database.
    const sync = /data-testid="sync-status"[\s\S]*?<\/section>/.exec(html)![0];
    expect(sync).toContain('data-resource="charge_points"');
    expect(sync).toContain("Latest run: completed");
    const [budget] = await sql<{ quota: number; window_seconds: number }>("SELECT quota, window_seconds FROM api_budgets WHERE install_row_id = $1", [install.installRowId]);
    expect(html).toContain(`of ${budget!.quota.toLocaleString("en")} requests per ${budget!.window_seconds} s in use`);

    // No token reaches the page, sealed or not.
    const [grant] = await sql<{ access_token_encrypted: string }>("SELECT access_token_encrypted FROM token_grants WHERE install_row_id = $1", [install.installRowId]);
    expect(html).not.toContain(grant!.access_token_encrypted.slice(0, 24));
  });

  it("a refreshed grant and one whose refresh outcome is unknown are in the timeline", async () => {
    const install = await installViaPortal(1002);
    await sql("UPDATE token_grants SET last_refreshed_at = now() - interval '10 minutes', refresh_started_at = now() - interval '1 minute' WHERE install_row_id = $1", [install.installRowId]);
    const signIn = await signInStaffWithFetch(required("STAFF_DEV_EMAIL"), required("STAFF_DEV_PASSWORD"));
    const html = await (await fetch(`${stack.appUrl}/admin/installs/${install.installRowId}`, { headers: { cookie: signIn.sessionCookie! } })).text();
    const tokens = timelineOf(html).filter((entry) => entry.kind === "tokens");
    expect(tokens.map((entry) => entry.text)).toEqual([
      expect.stringContaining("A refresh was sent and its outcome is not known yet"),
      expect.stringContaining("Tokens refreshed"),
    ]);
  });
});
