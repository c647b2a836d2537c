// Uninstall and re-install (contract §3, §6): after install.revoked, not one call with the old tokens, by pages or
// scheduled work; a re-install is a new install with a new install_id, which the app then serves.
import { ofType, tally } from "../sandbox";
import { judge } from "../types";
import type { Check } from "./check";

const reinstall: Check = {
  id: "uninstall.reinstall",
  group: "uninstall",
  obligation: "After install.revoked the old tokens are never used again; a re-install is a new install id",
  section: "§3, §6",
  async run(ctx) {
    const first = await ctx.install();
    await ctx.page(first.operator);
    await ctx.sandbox.revoke(first.installId);
    // From the app's answer to install.revoked on (the revoke returns once the delivery is answered): a request already
    // on its way before the app heard of it could not have been held back.
    const mark = await ctx.sandbox.mark();
    for (let i = 0; i < 2; i++) await ctx.page(first.operator);
    const jobs = [...(await ctx.trigger("jobs")), ...(await ctx.trigger("keepAlive"))];
    await ctx.sandbox.advanceClock(3601);
    await ctx.page(first.operator);
    const events = await ctx.sandbox.events(mark);
    const oldCalls = ofType(events, "api").filter((e) => e.detail.install_id === first.installId || e.detail.token_install_id === first.installId);
    const oldRefreshes = ofType(events, "token").filter((e) => e.detail.install_id === first.installId);
    const second = await ctx.install(first.operator);
    const again = await ctx.sandbox.mark();
    await ctx.page(second.operator);
    const served = ofType(await ctx.sandbox.events(again), "api").filter((e) => e.detail.install_id === second.installId);
    return judge([
      { ok: oldCalls.length === 0, seen: `API calls with the revoked install's tokens (3 pages, an hour later too${jobs.length ? `, ${jobs.join(", ")}` : ""}): ${oldCalls.length}${oldCalls.length ? ` (${tally(oldCalls.map((e) => e.detail.status))})` : ""}` },
      { ok: oldRefreshes.length === 0, seen: `token requests with its refresh token: ${oldRefreshes.length}` },
      { ok: second.installId !== first.installId, seen: `re-installed by the same operator: install ${second.installId} (was ${first.installId})` },
      { ok: served.some((e) => e.detail.status === 200), seen: `the new install's page: API ${tally(served.map((e) => e.detail.status))}` },
    ]);
  },
};

export const uninstallChecks: Check[] = [reinstall];
