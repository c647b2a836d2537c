// Webhooks (contract §6): forged, unsigned, stale, future-dated, oversize and replayed deliveries are refused or
// ignored, shown by what the app does next: after a refused `install.revoked` for a live install, the app's page still
// calls the API for it. A genuine one stops the app's calls, and every delivery is answered within the deadline.
import type { RunContext } from "../context";
import { ofType, tally, type DeliveryAnswer } from "../sandbox";
import { judge, type Outcome } from "../types";
import type { Check } from "./check";

/** Contract §6 and §8: a 2xx within 10 seconds. */
export const WEBHOOK_DEADLINE_MS = 10_000;
/** A stale or future delivered_at: an hour off, far outside any sensible tolerance window (contract §6.4, not shown). */
const SKEW_S = 3600;
/** An oversize body: 4 MiB inside a valid signature, a thousand times a real envelope (decision A121). */
const OVERSIZE_BYTES = 4 * 1024 * 1024;

/** The page calls the API for the install, answered 200: the app still uses it. */
async function stillServes(ctx: RunContext, installed: { installId: number; operator: Parameters<RunContext["page"]>[0] }): Promise<{ ok: boolean; seen: string }> {
  const mark = await ctx.sandbox.mark();
  await ctx.page(installed.operator);
  const calls = ofType(await ctx.sandbox.events(mark), "api").filter((e) => e.detail.install_id === installed.installId);
  return { ok: calls.some((e) => e.detail.status === 200), seen: `the page afterwards called the API for the install: ${tally(calls.map((e) => e.detail.status))}` };
}

function crafted(
  id: string,
  obligation: string,
  section: string,
  delivery: { signature?: "valid" | "forged" | "missing"; deliveredAtOffsetSeconds?: number; padBytes?: number },
  expectAnswer: (attempt: Attempt) => { ok: boolean; expected: string },
): Check {
  return {
    id,
    group: "webhooks",
    obligation,
    section,
    async run(ctx): Promise<Outcome> {
      const installed = await ctx.install();
      const before = await stillServes(ctx, installed);
      const install = (await ctx.sandbox.installs()).find((i) => i.install_id === installed.installId)!;
      const sent = await ctx.sandbox.craft({ type: "install.revoked", data: { install_id: installed.installId, operator_id: install.operator_id, slug: "conformance" }, ...delivery });
      const attempt = sent.attempts[0]!;
      const answer = expectAnswer(attempt);
      const after = await stillServes(ctx, installed);
      const answered =
        attempt.status === null && attempt.upload_cut ? "closed the connection during the upload, before an answer could be read" : `answered ${attempt.status ?? attempt.error}`;
      const afterSeen = after.seen.replace("the page afterwards", "after the delivery, the page");
      // The cause, not only the effect: the app stopped using a live install because it acted on this delivery.
      const refused = attempt.status !== null && attempt.status >= 400 && attempt.status < 500;
      const cause = `${answered}, then stopped using the install: it acted on the ${refused ? "refused body" : `${id.replace("webhooks.", "")} delivery`}`;
      return judge([
        { ok: answer.ok, seen: `the app ${answered} (${answer.expected}) in ${attempt.latency_ms} ms` },
        { ok: (attempt.latency_ms ?? Infinity) < WEBHOOK_DEADLINE_MS, seen: `answered within the ${WEBHOOK_DEADLINE_MS / 1000} s deadline: ${attempt.latency_ms !== null && attempt.latency_ms < WEBHOOK_DEADLINE_MS ? "yes" : "no"}` },
        { ok: after.ok, seen: after.ok || !before.ok ? afterSeen : `${cause} (${afterSeen})` },
        { ok: before.ok, seen: before.seen.replace("the page afterwards", "before the delivery, the page") },
      ]);
    },
  };
}

type Attempt = DeliveryAnswer["attempts"][number];
const notAccepted = ({ status }: Attempt) => ({ ok: status !== null && status >= 400 && status < 500, expected: "a 4xx refusal expected" });
const noServerError = ({ status }: Attempt) => ({ ok: status !== null && status < 500, expected: "refused or ignored, never a 5xx" });
/**
 * An ordinary HTTP server refuses a body over its limit unread: 413 as soon as it reads Content-Length, then it closes
 * the connection while the body is still being sent. Whether its answer can be read first is a race on the wire, and an
 * app cannot have acted on a body it never took: a cut upload is a refusal (decision A121). Closing the connection
 * after the whole body arrived, without an answer, is not.
 */
const refusedOrIgnored = (attempt: Attempt) => (attempt.status === null && attempt.upload_cut ? { ok: true, expected: "refused unread" } : noServerError(attempt));

const forged = crafted("webhooks.forged", "A forged install.revoked (wrong signature) is refused with 401 and changes nothing", "§6.3", { signature: "forged" }, ({ status }) => ({ ok: status === 401, expected: "401 expected" }));
const unsigned = crafted("webhooks.unsigned", "An unsigned install.revoked is refused and changes nothing", "§6.1–6.3", { signature: "missing" }, notAccepted);
const stale = crafted("webhooks.stale", "A stale install.revoked (delivered_at an hour old, validly signed) is refused or ignored", "§6.4", { deliveredAtOffsetSeconds: -SKEW_S }, noServerError);
const future = crafted("webhooks.future-dated", "A future-dated install.revoked (delivered_at an hour ahead, validly signed) is refused or ignored", "§6.4", { deliveredAtOffsetSeconds: SKEW_S }, noServerError);
const oversize = crafted("webhooks.oversize", `An oversize install.revoked (${OVERSIZE_BYTES / 1024 / 1024} MiB, validly signed) is refused or ignored`, "§6, §8", { padBytes: OVERSIZE_BYTES }, refusedOrIgnored);

const replayed: Check = {
  id: "webhooks.replayed",
  group: "webhooks",
  obligation: "A captured install.revoked replayed byte for byte after a re-install leaves the new install alone",
  section: "§6.4, §3",
  async run(ctx) {
    const first = await ctx.install();
    await ctx.sandbox.revoke(first.installId);
    const delivery = ofType(await ctx.sandbox.events(0, { type: "webhook", install_id: first.installId }), "webhook").find((e) => e.detail.event_type === "install.revoked" && e.detail.kind === "original");
    const second = await ctx.install(first.operator);
    const resent = await ctx.sandbox.control<{ attempts: { status: number | null; latency_ms: number | null }[] }>("POST", `/deliveries/${String(delivery?.detail.delivery_id)}/resend-captured`);
    const after = await stillServes(ctx, second);
    return judge([
      { ok: after.ok, seen: after.seen.replace("the page afterwards", "after the replay, the page") },
      { ok: (resent.attempts[0]?.status ?? 500) < 500, seen: `the app answered the replay ${resent.attempts[0]?.status ?? "nothing"}` },
      { ok: second.installId !== first.installId, seen: `install ${first.installId} revoked, re-installed as ${second.installId}; the first one's install.revoked sent again with its original bytes and signature` },
    ]);
  },
};

const genuineRevoked: Check = {
  id: "webhooks.genuine-revoked",
  group: "webhooks",
  obligation: "A genuine install.revoked is answered 2xx within the deadline and stops the app's API calls for the install",
  section: "§3, §6",
  async run(ctx) {
    const installed = await ctx.install();
    await ctx.page(installed.operator);
    const before = await ctx.sandbox.mark();
    await ctx.sandbox.revoke(installed.installId);
    const attempt = ofType(await ctx.sandbox.events(before, { type: "webhook" }), "webhook").find((e) => e.detail.event_type === "install.revoked");
    // From the app's answer to install.revoked on (the revoke returns once the delivery is answered): a request already
    // on its way before the app heard of it could not have been held back.
    const mark = await ctx.sandbox.mark();
    const jobs: string[] = [];
    for (let i = 0; i < 3; i++) {
      await ctx.page(installed.operator);
      jobs.push(...(await ctx.trigger("jobs")));
    }
    const events = await ctx.sandbox.events(mark);
    const calls = ofType(events, "api").filter((e) => e.detail.install_id === installed.installId || e.detail.token_install_id === installed.installId);
    const status = attempt?.detail.status as number | null | undefined;
    const latency = attempt?.detail.latency_ms as number | null | undefined;
    return judge([
      { ok: status !== undefined && status !== null && status >= 200 && status < 300, seen: `install.revoked answered ${status ?? attempt?.detail.error ?? "never sent"}` },
      { ok: latency !== undefined && latency !== null && latency < WEBHOOK_DEADLINE_MS, seen: `in ${latency ?? "?"} ms (deadline ${WEBHOOK_DEADLINE_MS / 1000} s)` },
      { ok: calls.length === 0, seen: `API calls with the install's tokens over 3 pages afterwards${jobs.length ? " (and the scheduled work)" : ""}: ${calls.length}${calls.length ? ` (${tally(calls.map((e) => e.detail.status))})` : ""}` },
    ]);
  },
};

export const webhookChecks: Check[] = [forged, unsigned, stale, future, oversize, replayed, genuineRevoked];
