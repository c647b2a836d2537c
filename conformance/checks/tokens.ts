// Tokens (contract §2 "Tokens and codes", §3, §4.1, §7, §8): one refresh for many pages at expiry, the rotated
// refresh token presented next, a refused refresh not retried blindly, invalid_client stopping token requests, and
// idle installs kept alive before their refresh token dies.
import { ofType, sleep, tally, type SandboxEvent } from "../sandbox";
import { judge, notRun } from "../types";
import type { Check } from "./check";
import type { RunContext } from "../context";

/** Contract §2: an access token lives one hour; one second more and the service refuses it. */
const PAST_ACCESS_EXPIRY_S = 3601;
const DAY_S = 86_400;
const CONCURRENT_PAGES = 12;
/** Pages loaded right after the install, while its first access token has most of its hour left. */
const FRESH_PAGES = 2;

const refreshesOf = (events: SandboxEvent[]) => ofType(events, "token").filter((e) => e.detail.grant_type === "refresh_token");
/** Token requests the service could not tie to an install (a removed client's, for one) count for everyone. */
const tokenRequests = (events: SandboxEvent[], installId: number) => ofType(events, "token").filter((e) => e.detail.install_id === installId || e.detail.install_id === null);
/** The install's API calls, with those whose token the service refused (it names the token's install: sandbox decision 57). */
const apiOf = (events: SandboxEvent[], installId: number) => ofType(events, "api").filter((e) => e.detail.install_id === installId || e.detail.token_install_id === installId);

async function installAndWarm(ctx: RunContext) {
  const installed = await ctx.install();
  await ctx.page(installed.operator);
  return installed;
}

const singleRefresh: Check = {
  id: "tokens.single-refresh",
  group: "tokens",
  obligation: `Many concurrent pages at expiry cause exactly one refresh`,
  section: "§3, §4.1",
  async run(ctx) {
    // Two pages one after the other while the install's first access token is minutes old: a refresh here is the cause
    // of too many below, refreshing on every page rather than at expiry.
    const installed = await ctx.install();
    const fresh = await ctx.sandbox.mark();
    for (let i = 0; i < FRESH_PAGES; i++) await ctx.page(installed.operator);
    const early = refreshesOf(await ctx.sandbox.events(fresh)).filter((e) => e.detail.install_id === installed.installId);
    const before = await ctx.sandbox.tokenStats(installed.installId);
    const mark = await ctx.sandbox.mark();
    await ctx.sandbox.advanceClock(PAST_ACCESS_EXPIRY_S);
    const pages = await Promise.all(Array.from({ length: CONCURRENT_PAGES }, () => ctx.page(installed.operator)));
    const events = await ctx.sandbox.events(mark);
    const refreshes = refreshesOf(events).filter((e) => e.detail.install_id === installed.installId);
    const after = await ctx.sandbox.tokenStats(installed.installId);
    return judge(
      [
        { ok: early.length === 0, seen: `${FRESH_PAGES} pages one after the other right after the install: ${early.length} refreshes while the token was still valid` },
        { ok: refreshes.length === 1, seen: `${CONCURRENT_PAGES} pages at once after the access token expired: ${refreshes.length} refresh request(s) (${tally(refreshes.map((e) => e.detail.outcome))})` },
        { ok: after.refreshes_issued - before.refreshes_issued === 1, seen: `refreshes issued: ${after.refreshes_issued - before.refreshes_issued}` },
        { ok: after.chain_revocations === 0, seen: `chains revoked for a reused refresh token: ${after.chain_revocations}` },
        { ok: apiOf(events, installed.installId).some((e) => e.detail.status === 200), seen: `API answers: ${tally(apiOf(events, installed.installId).map((e) => e.detail.status))}` },
      ],
      [`the pages answered: ${tally(pages.map((p) => p.status))}`],
    );
  },
};

const rotation: Check = {
  id: "tokens.rotation",
  group: "tokens",
  obligation: "The rotated refresh token is the one presented next",
  section: "§2, §3, §4.1",
  async run(ctx) {
    const installed = await installAndWarm(ctx);
    const mark = await ctx.sandbox.mark();
    for (let round = 0; round < 3; round++) {
      await ctx.sandbox.advanceClock(PAST_ACCESS_EXPIRY_S);
      await ctx.page(installed.operator);
    }
    const refreshes = refreshesOf(await ctx.sandbox.events(mark)).filter((e) => e.detail.install_id === installed.installId);
    const stats = await ctx.sandbox.tokenStats(installed.installId);
    return judge([
      { ok: refreshes.length === 3 && refreshes.every((e) => e.detail.outcome === "issued"), seen: `three expiries, one page each: refreshes ${tally(refreshes.map((e) => e.detail.outcome))}${refreshes.some((e) => String(e.detail.detail ?? "").includes("reused")) ? " (a used refresh token was presented again)" : ""}` },
      { ok: stats.chain_revocations === 0 && !stats.chain_revoked, seen: `chain revoked: ${stats.chain_revoked ? `yes (${stats.chain_revoked_reason})` : "no"}` },
    ]);
  },
};

const refusedRefresh: Check = {
  id: "tokens.refused-refresh",
  group: "tokens",
  obligation: "A refused refresh is never retried blindly",
  section: "§7",
  async run(ctx) {
    const installed = await installAndWarm(ctx);
    const mark = await ctx.sandbox.mark();
    // 31 days on: the refresh token has expired at the service (contract §2: 30 days), so the refresh is refused.
    await ctx.sandbox.advanceClock(31 * DAY_S);
    const pages = [];
    for (let i = 0; i < 4; i++) pages.push(await ctx.page(installed.operator));
    const refreshes = refreshesOf(await ctx.sandbox.events(mark)).filter((e) => e.detail.install_id === installed.installId);
    return judge(
      [{ ok: refreshes.length <= 1, seen: `4 pages after the refresh token expired: ${refreshes.length} refresh request(s) (${tally(refreshes.map((e) => e.detail.outcome))}); at most 1 expected` }],
      [`the pages answered: ${tally(pages.map((p) => p.status))}`],
    );
  },
};

const invalidClient: Check = {
  id: "tokens.invalid-client",
  group: "tokens",
  obligation: "invalid_client stops token requests until the configuration changes",
  section: "§5.7, §7",
  async run(ctx) {
    const installed = await installAndWarm(ctx);
    await ctx.sandbox.control("POST", "/clients/remove");
    try {
      const mark = await ctx.sandbox.mark();
      await ctx.sandbox.advanceClock(PAST_ACCESS_EXPIRY_S);
      for (let i = 0; i < 4; i++) {
        await ctx.page(installed.operator);
        await sleep(100);
      }
      const jobs = await ctx.trigger("keepAlive");
      const requests = tokenRequests(await ctx.sandbox.events(mark), installed.installId);
      return judge(
        [{ ok: requests.length <= 1, seen: `token requests while the service answers invalid_client, over 4 pages${jobs.length ? " and a keep-alive run" : ""}: ${requests.length} (${tally(requests.map((e) => e.detail.outcome))}); at most 1 expected` }],
        ["the app's configuration did not change during the run, so no further token request was due"],
      );
    } finally {
      await ctx.sandbox.control("POST", "/clients/restore");
    }
  },
};

const keepAlive: Check = {
  id: "tokens.keep-alive",
  group: "tokens",
  obligation: "Idle installs are kept alive before their refresh token expires",
  section: "§2, §8",
  async run(ctx) {
    if (!ctx.target.keepAlive) return notRun("no keep-alive trigger was given (--keep-alive-url): the app's scheduled work cannot be started from outside");
    if (!ctx.target.advanceAppClock) return notRun("no way to move the app's clock was given (--app-clock-command): the app decides what is due by its own clock");
    const installed = await installAndWarm(ctx);
    const mark = await ctx.sandbox.mark();
    // 24 days idle, for both sides: six days before the refresh token dies (contract §2: 30 days).
    await ctx.sandbox.advanceClock(24 * DAY_S);
    await ctx.target.advanceAppClock(24 * DAY_S);
    const answers = await ctx.trigger("keepAlive");
    const kept = refreshesOf(await ctx.sandbox.events(mark)).filter((e) => e.detail.install_id === installed.installId);
    // Ten more days: 34 since the install, past the first refresh token's life.
    await ctx.sandbox.advanceClock(10 * DAY_S);
    await ctx.target.advanceAppClock(10 * DAY_S);
    const later = await ctx.sandbox.mark();
    await ctx.page(installed.operator);
    const events = await ctx.sandbox.events(later);
    const api = apiOf(events, installed.installId);
    // An app that serves its page from its own copy may make no call at all now; whatever it does must still work.
    const refused = refreshesOf(events).filter((e) => e.detail.install_id === installed.installId && e.detail.outcome !== "issued");
    const stats = await ctx.sandbox.tokenStats(installed.installId);
    return judge(
      [
        { ok: kept.some((e) => e.detail.outcome === "issued"), seen: `keep-alive run 24 days after the install (${answers.join(", ")}): refreshes ${tally(kept.map((e) => e.detail.outcome))}` },
        {
          ok: refused.length === 0 && (api.length === 0 || api.some((e) => e.detail.status === 200)),
          seen: `34 days after the install, its page: refreshes refused ${refused.length}, API calls ${tally(api.map((e) => e.detail.status))}`,
        },
        { ok: !stats.chain_revoked, seen: `chain revoked: ${stats.chain_revoked ? `yes (${stats.chain_revoked_reason})` : "no"}` },
      ],
      [],
    );
  },
};

/** invalid_client last of all: an app that keeps its obligation sends no token request again until restarted with a new configuration. */
export const tokenChecks: Check[] = [singleRefresh, rotation, refusedRefresh, keepAlive];
export const lastChecks: Check[] = [invalidClient];
