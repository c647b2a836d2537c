// Judged over the whole run, after every other check: the app never started an authorization itself (contract §1.3),
// and answered every webhook within the deadline (§6, §8).
import { ofType } from "../sandbox";
import { judge } from "../types";
import type { Check } from "./check";
import { WEBHOOK_DEADLINE_MS } from "./webhooks";

const noAuthorization: Check = {
  id: "install.no-authorization",
  group: "install",
  obligation: "The app never starts an authorization itself (no authorization URL, no connect button)",
  section: "§1.2–1.3, §4.1",
  async run(ctx) {
    const { issuer } = await ctx.sandbox.health();
    const authorizeUrl = `${issuer}/oauth2/auth`;
    const events = await ctx.sandbox.events(ctx.startSeq, { type: "authorize" });
    const notPortal = events.filter((e) => e.detail.reason === "not_built_by_portal");
    const pagesWithUrl = ctx.pages.filter((p) => p.html.includes(authorizeUrl) || p.html.includes("/oauth2/auth?"));
    return judge([
      { ok: notPortal.length === 0, seen: `authorization requests the portal did not build, over the whole run: ${notPortal.length}` },
      { ok: pagesWithUrl.length === 0, seen: `app pages with an authorization URL, of ${ctx.pages.length} seen: ${pagesWithUrl.length}${pagesWithUrl.length ? ` (${[...new Set(pagesWithUrl.map((p) => new URL(p.url).pathname))].join(", ")})` : ""}` },
    ]);
  },
};

const deadline: Check = {
  id: "webhooks.deadline",
  group: "webhooks",
  obligation: "Every delivery of the run is answered within the deadline",
  section: "§6, §8",
  async run(ctx) {
    const attempts = ofType(await ctx.sandbox.events(ctx.startSeq, { type: "webhook" }), "webhook").filter((e) => e.detail.outcome !== "dropped");
    const late = attempts.filter((e) => e.detail.latency_ms === null || Number(e.detail.latency_ms) >= WEBHOOK_DEADLINE_MS);
    const slowest = Math.max(0, ...attempts.map((e) => Number(e.detail.latency_ms ?? 0)));
    const genuineFailed = attempts.filter((e) => !e.detail.crafted && e.detail.outcome !== "delivered");
    return judge([
      { ok: late.length === 0, seen: `deliveries answered after ${WEBHOOK_DEADLINE_MS / 1000} s or not at all: ${late.length} of ${attempts.length} (slowest ${slowest} ms)` },
      { ok: genuineFailed.length === 0, seen: `the service's own deliveries not answered 2xx: ${genuineFailed.length}` },
    ]);
  },
};

export const wholeRunChecks: Check[] = [noAuthorization, deadline];
