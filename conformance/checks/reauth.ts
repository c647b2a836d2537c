// Re-authorization (contract §3, §7): after 403 NEEDS_REAUTH the app makes no API call for the install until the
// operator has re-consented at reauth_url, to which the app shows the way; then it resumes without a new install.
import { ofType, tally } from "../sandbox";
import { fail, judge } from "../types";
import type { Check } from "./check";

const PAGES_WHILE_FLAGGED = 3;

const reauthorization: Check = {
  id: "reauth.stop-and-resume",
  group: "reauth",
  obligation: "After NEEDS_REAUTH the app makes no API call until the operator re-consents, then resumes without a new install",
  section: "§3, §7",
  async run(ctx) {
    const installed = await ctx.install();
    await ctx.page(installed.operator);
    await ctx.sandbox.control("POST", `/installs/${installed.installId}/flag-reauth`);
    const mark = await ctx.sandbox.mark();
    let last = await ctx.page(installed.operator);
    for (let i = 1; i < PAGES_WHILE_FLAGGED; i++) last = await ctx.page(installed.operator);
    const jobs = await ctx.trigger("jobs");
    const whileFlagged = ofType(await ctx.sandbox.events(mark), "api").filter((e) => e.detail.install_id === installed.installId);
    const firstRefusal = whileFlagged.findIndex((e) => e.detail.error_code === "NEEDS_REAUTH");
    const afterRefusal = firstRefusal === -1 ? whileFlagged : whileFlagged.slice(firstRefusal + 1);

    const reauthUrl = (await ctx.sandbox.installs()).find((i) => i.install_id === installed.installId)?.reauth_url;
    if (!reauthUrl) return fail("the sandbox shows no reauth_url for the flagged install");
    const way = await installed.operator.followTo(reauthUrl, last);
    const backMark = await ctx.sandbox.mark();
    const back = await installed.operator.approveReauthorization(reauthUrl);
    await ctx.page(installed.operator);
    const events = await ctx.sandbox.events(backMark);
    const resumed = ofType(events, "api").filter((e) => e.detail.install_id === installed.installId);
    const redemptions = ofType(events, "token").filter((e) => e.detail.grant_type === "authorization_code");
    const active = (await ctx.sandbox.installs()).filter((i) => i.operator_id === installed.operator.operatorId && i.status === "active");
    return judge([
      { ok: firstRefusal !== -1, seen: `the first API call after the flag met NEEDS_REAUTH: ${firstRefusal !== -1 ? "yes" : `no (calls: ${tally(whileFlagged.map((e) => e.detail.status))})`}` },
      { ok: afterRefusal.length === 0, seen: `API calls after NEEDS_REAUTH over ${PAGES_WHILE_FLAGGED} pages${jobs.length ? ` and the scheduled work (${jobs.join(", ")})` : ""}: ${afterRefusal.length}${afterRefusal.length ? ` (${tally(afterRefusal.map((e) => e.detail.error_code ?? e.detail.status))})` : ""}` },
      { ok: way !== null, seen: way ? `the app's page shows the way to reauth_url: ${way}` : "the app's page offers no link or form that leads to reauth_url" },
      { ok: resumed.some((e) => e.detail.status === 200), seen: `after the re-consent (landed on ${new URL(back.url).pathname}, HTTP ${back.status}), API calls for the same install: ${tally(resumed.map((e) => e.detail.status))}` },
      { ok: redemptions.length === 0 && active.length === 1 && active[0]!.install_id === installed.installId, seen: `no new install: ${redemptions.length} code redemption(s), active install ${active.map((i) => i.install_id).join(", ") || "none"} (was ${installed.installId})` },
    ]);
  },
};

export const reauthChecks: Check[] = [reauthorization];
