// The install (contract §1.3, §1.7, §2 "Tokens and codes", §5.2, §5.3): the code is redeemed at once, in the
// redirect_uri's handler, with client_secret_post, the exact redirect_uri and no PKCE; a reused callback URL is not
// redeemed again; a declined consent stores nothing and calls nothing.
import { ofType, sleep, tally } from "../sandbox";
import { fail, judge, type Outcome } from "../types";
import type { Check } from "./check";

/** Contract §2: an authorization code lives one minute. */
const CODE_LIFETIME_MS = 60_000;
/** How long the run waits for a redemption the app did not make before it answered the redirect. */
const LATE_REDEMPTION_WAIT_MS = 5_000;

/** The sandbox's checks of a code redemption (sandbox/idp/token.ts), as they appear in its token event. */
const REDEMPTION_CHECKS = [
  { words: "client authentication method is client_secret_post", says: "client_secret_post (credentials in the form)" },
  { words: "redirect_uri equals the one of the authorization request", says: "the exact redirect_uri" },
  { words: "no code_verifier", says: "no PKCE (no code_verifier)" },
] as const;

const redeem: Check = {
  id: "install.redeem",
  group: "install",
  obligation: "The code is redeemed at once, in the redirect_uri's handler, with client_secret_post, the exact redirect_uri and no PKCE",
  section: "§1.7, §2, §5.2, §5.3",
  async run(ctx) {
    const mark = await ctx.sandbox.mark();
    const operator = await ctx.freeOperator();
    const callback = await operator.consent("approve");
    const answer = await operator.request(callback.toString());
    const byHandlerEnd = ofType(await ctx.sandbox.events(mark, { type: "token" }), "token").filter((e) => e.detail.grant_type === "authorization_code");
    let redemptions = byHandlerEnd;
    if (redemptions.length === 0) {
      // Not redeemed before the app answered: wait a little to tell "late" from "never".
      for (let waited = 0; waited < LATE_REDEMPTION_WAIT_MS && redemptions.length === 0; waited += 250) {
        await sleep(250);
        redemptions = ofType(await ctx.sandbox.events(mark, { type: "token" }), "token").filter((e) => e.detail.grant_type === "authorization_code");
      }
    }
    if (answer.location) await operator.load(answer.location);
    const install = (await ctx.sandbox.installs()).find((i) => i.operator_id === operator.operatorId && i.status === "active");
    if (install) ctx.adopt({ installId: install.install_id, operator, callback, answer });
    const consent = ofType(await ctx.sandbox.events(mark, { type: "consent" }), "consent").find((e) => String(e.detail.outcome).startsWith("approved"));
    const first = redemptions[0];
    if (!first) return fail(`no code redemption within ${LATE_REDEMPTION_WAIT_MS / 1000} s of the app's answer to the redirect (HTTP ${answer.status})`);
    const checks = (first.detail.checks as string[] | undefined) ?? [];
    const delayMs = consent ? Date.parse(first.at) - Date.parse(consent.at) : Number.NaN;
    return judge(
      [
        { ok: byHandlerEnd.length > 0, seen: byHandlerEnd.length > 0 ? "redeemed before the app answered the redirect (in the handler)" : "redeemed only after the app had answered the redirect: not in the handler (a queue or a background task)" },
        { ok: delayMs < CODE_LIFETIME_MS, seen: `redeemed ${(delayMs / 1000).toFixed(2)} s after the consent (the code lives ${CODE_LIFETIME_MS / 1000} s)` },
        { ok: first.detail.status === 200, seen: `the token endpoint answered ${first.detail.status} ${first.detail.outcome}` },
        ...REDEMPTION_CHECKS.map((c) => {
          const line = checks.find((entry) => entry.includes(c.words));
          return { ok: line?.startsWith("pass") ?? false, seen: `${c.says}: ${line ? (line.startsWith("pass") ? "yes" : "NO") : "not reached (an earlier check failed)"}` };
        }),
      ],
      [`the sandbox's checks, in order: ${checks.join("; ")}`],
    );
  },
};

const reusedCallback: Check = {
  id: "install.reused-callback",
  group: "install",
  obligation: "A reused callback URL (a reload, a double click) causes no second redemption",
  section: "§2, §3",
  async run(ctx) {
    const installed = await ctx.install();
    const handshake = ofType(await ctx.sandbox.events(0, { install_id: installed.installId, type: "token" }), "token").find((e) => e.detail.grant_type === "authorization_code")?.detail.handshake;
    const mark = await ctx.sandbox.mark();
    const again = await installed.operator.request(installed.callback.toString());
    const redemptions = ofType(await ctx.sandbox.events(mark, { type: "token" }), "token").filter((e) => e.detail.grant_type === "authorization_code");
    const stats = await ctx.sandbox.tokenStats(installed.installId);
    const page = await ctx.page(installed.operator);
    return judge(
      [
        { ok: redemptions.length === 0, seen: `the same callback URL again: ${redemptions.length} more code redemption(s) (${tally(redemptions.map((e) => e.detail.outcome))})` },
        { ok: stats.chain_revocations === 0, seen: `chains revoked for a reused code: ${stats.chain_revocations}${stats.chain_revoked_reason ? ` (${stats.chain_revoked_reason})` : ""}` },
        { ok: again.status < 500, seen: `the app answered the reused URL with HTTP ${again.status}` },
        { ok: page.status < 500, seen: `the page afterwards: HTTP ${page.status}` },
      ],
      handshake ? [`handshake ${String(handshake)}`] : [],
    );
  },
};

const declined: Check = {
  id: "install.declined",
  group: "install",
  obligation: "A declined consent stores nothing and calls nothing",
  section: "§1.4, §7",
  async run(ctx): Promise<Outcome> {
    const operator = await ctx.freeOperator();
    const callback = await operator.consent("deny");
    const mark = await ctx.sandbox.mark();
    const answer = await operator.load(callback.toString());
    const page = await ctx.page(operator);
    const events = await ctx.sandbox.events(mark);
    const tokens = ofType(events, "token");
    const api = ofType(events, "api");
    const installs = (await ctx.sandbox.installs()).filter((i) => i.operator_id === operator.operatorId && i.status === "active");
    return judge([
      { ok: tokens.length === 0, seen: `token requests after the denial: ${tokens.length}` },
      { ok: api.length === 0, seen: `API calls after the denial, the app's page loaded with the cookies it set: ${api.length}` },
      { ok: answer.status < 500, seen: `the app answered the redirect with error=access_denied: HTTP ${answer.status}` },
      { ok: installs.length === 0, seen: `installs at the service: ${installs.length}` },
      { ok: page.status < 500, seen: `the page afterwards: HTTP ${page.status}` },
    ]);
  },
};

export const installChecks: Check[] = [redeem, reusedCallback, declined];
