// POST {issuer}/oauth2/token: the token endpoint, behaving like Hydra/fosite (public-facts.md).
// - application/x-www-form-urlencoded only; client_secret_post only (contract §5.2).
// - authorization_code: single use; a second use revokes the tokens minted from the first (fosite).
// - refresh_token: rotation; the used token dies, every earlier access token of the chain is revoked
//   (unless switched off: README decision 55), and presenting a used refresh token revokes the whole
//   chain (contract §3).
// Every call is written to the event log with grant type, install_id, outcome and the checks it made, in order
// (README decision 52): never a token, code or secret,
// and counted per install for GET /_sandbox/installs/:id/token-stats. Armed faults (faults.ts) are applied here.
import { Hono } from "hono";
import { z } from "zod";
import { clientExists, clientSecretMatches } from "../app-registration.js";
import type { SandboxContext } from "../context.js";
import { dropConnection } from "../drop-connection.js";
import { sha256Hex } from "../crypto.js";
import type { AppliedTokenFault } from "../faults.js";
import { Checks } from "../handshake.js";
import { ACCESS_TOKEN_EXPIRES_IN_SECONDS, ACCESS_TOKEN_TTL_MS, AUTHORIZATION_CODE_TTL_MS, REFRESH_TOKEN_TTL_MS } from "../lifetimes.js";
import { GENERIC_ERROR_DESCRIPTION, type IdpBehaviour } from "./behaviour.js";
import { HINTS, OAuthError } from "./errors.js";
import { findToken, handshakeOfChain, issueTokenPair, revokeAccessTokensOfChain, revokeChain } from "./tokens.js";

const tokenFormSchema = z.object({
  grant_type: z.string().optional(),
  client_id: z.string().optional(),
  client_secret: z.string().optional(),
  code: z.string().optional(),
  redirect_uri: z.string().optional(),
  code_verifier: z.string().optional(),
  refresh_token: z.string().optional(),
  /** Revocation endpoint only. */
  token: z.string().optional(),
});
type TokenForm = z.infer<typeof tokenFormSchema>;

interface TokenResponseBody {
  access_token: string;
  expires_in?: number;
  refresh_token: string;
  scope?: string;
  token_type: "bearer";
}

/** Leaves out the fields RFC 6749 §5.1 lets a server leave out, when the switches say so (idp/behaviour.ts). */
function shapeTokenResponse(body: TokenResponseBody, behaviour: IdpBehaviour): TokenResponseBody {
  const shaped = { ...body };
  if (behaviour.omitScope) delete shaped.scope;
  if (behaviour.omitExpiresIn) delete shaped.expires_in;
  return shaped;
}

/** The error body: fosite's wording, or (switch `errorWording: "generic"`) the RFC 6749 code with a text nobody can match on. */
function errorBody(error: OAuthError, behaviour: IdpBehaviour): { error: string; error_description: string } {
  return behaviour.errorWording === "generic" ? { error: error.error, error_description: GENERIC_ERROR_DESCRIPTION } : error.toJSON();
}

/** What the event log records about a call (safe to print). */
interface CallNotes {
  grantType: string | null;
  installId: number | null;
  detail: string | null;
  /** The install handshake an authorization_code call belongs to (README decision 52). */
  handshake: string | null;
  /** What the call was checked for, in order, and what it issued: names and lifetimes, never values. */
  checks: Checks;
  results: string[];
}

/** fosite's server_error description, used for injected 500s. */
const SERVER_ERROR = {
  error: "server_error",
  error_description: "The authorization server encountered an unexpected condition that prevented it from fulfilling the request.",
} as const;

const NO_STORE_HEADERS = { "Cache-Control": "no-store", Pragma: "no-cache" } as const;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Parses the body as a form, first value wins for repeated fields (as Go's url.Values.Get does). */
async function readForm(request: Request, checks = new Checks()): Promise<TokenForm> {
  const contentType = request.headers.get("content-type") ?? "";
  if (!checks.verify(/^application\/x-www-form-urlencoded\s*(;|$)/i.test(contentType), "the body is application/x-www-form-urlencoded")) {
    throw new OAuthError("invalid_request", HINTS.notAForm);
  }
  const params = new URLSearchParams(await request.text());
  const first: Record<string, string> = {};
  for (const [key, value] of params) if (!(key in first)) first[key] = value;
  if (Object.keys(first).length === 0) throw new OAuthError("invalid_request", HINTS.emptyBody);
  return tokenFormSchema.parse(first);
}

/** client_secret_post only. Credentials in an Authorization: Basic header are refused as Hydra refuses them. */
function authenticateClient(ctx: SandboxContext, request: Request, form: TokenForm, checks = new Checks()): void {
  const registered = ctx.config.client;
  const authorization = request.headers.get("authorization");
  const basic = authorization !== null && /^basic\s+/i.test(authorization);
  checks.verify(!basic, "client authentication method is client_secret_post (credentials in the form, no Authorization: Basic)");
  if (authorization && basic) {
    let basicId = "";
    try {
      const decoded = Buffer.from(authorization.replace(/^basic\s+/i, ""), "base64").toString("utf8");
      basicId = decodeURIComponent(decoded.split(":")[0] ?? "");
    } catch {
      basicId = "";
    }
    const claimedId = basicId || form.client_id || "";
    if (claimedId !== registered.clientId || !clientExists(ctx)) throw new OAuthError("invalid_client", HINTS.clientNotFound);
    throw new OAuthError("invalid_client", HINTS.basicNotAllowed);
  }
  if (!checks.verify(!!form.client_id && form.client_id === registered.clientId && clientExists(ctx), "client_id is the registered client, and the client exists")) {
    throw new OAuthError("invalid_client", HINTS.clientNotFound);
  }
  // Wrong or missing secret (including one replaced by a re-issue): fosite answers with the bare description.
  if (!checks.verify(!!form.client_secret && clientSecretMatches(ctx, form.client_secret), "client_secret matches the registered one")) throw new OAuthError("invalid_client");
}

/** What a successful grant issued, for the event log: lifetimes and scopes, never the values. */
function issuedResults(scopes: readonly string[]): string[] {
  return [
    `access token issued: expires_in ${ACCESS_TOKEN_EXPIRES_IN_SECONDS} (lives ${ACCESS_TOKEN_TTL_MS / 1000} s)`,
    `refresh token issued: lives ${REFRESH_TOKEN_TTL_MS / 86_400_000} days, single use (rotates)`,
    `scope: ${scopes.join(" ")}`,
  ];
}

function redeemAuthorizationCode(ctx: SandboxContext, form: TokenForm, notes: CallNotes): TokenResponseBody {
  const { checks } = notes;
  const codeHash = sha256Hex(form.code ?? "");
  const code = ctx.store.state.codes[codeHash];
  if (!code) {
    checks.fail("the code is known");
    throw new OAuthError("invalid_grant");
  }
  checks.pass("the code is known");
  notes.installId = code.installId;

  if (!checks.verify(code.usedAtMs === null, "the code was not used before (single use)")) {
    // fosite: "If an authorize code is used twice, we revoke all refresh and access tokens associated with this request."
    const revocation = revokeChain(ctx, code.chainId, "code_reuse");
    if (revocation.firstRevocation) ctx.store.tokenStatsOf(code.installId).chainRevocations += 1;
    notes.detail = `code reused; ${revocation.tokensRevoked} token(s) of its chain revoked`;
    notes.results.push(`every token minted from this code is revoked (${revocation.tokensRevoked} still active)`);
    throw new OAuthError("invalid_grant", HINTS.codeAlreadyUsed);
  }
  if (!checks.verify(code.expiresAtMs > ctx.clock.nowMs(), `the code has not expired (lives ${AUTHORIZATION_CODE_TTL_MS / 1000} s)`)) {
    notes.detail = "code expired (1 minute)";
    throw new OAuthError("invalid_grant"); // fosite wraps the expiry without a hint
  }
  if (!checks.verify(code.clientId === form.client_id, "client_id is the one the code was issued to")) throw new OAuthError("invalid_grant", HINTS.codeClientMismatch);
  if (!checks.verify(code.redirectUri === form.redirect_uri, "redirect_uri equals the one of the authorization request")) {
    notes.detail = "redirect_uri differs from the authorization request";
    throw new OAuthError("invalid_grant", HINTS.codeRedirectMismatch);
  }
  if (!checks.verify(!form.code_verifier, "no code_verifier (no PKCE was started)")) {
    // No code_challenge was ever accepted for this client, so there is no PKCE data to check against.
    notes.detail = "code_verifier sent without a code_challenge";
    throw new OAuthError("invalid_grant", HINTS.pkceDataMissing);
  }
  const install = ctx.store.findInstall(code.installId);
  if (!checks.verify(install?.status === "active", "the install is active")) throw new OAuthError("invalid_grant");

  code.usedAtMs = ctx.clock.nowMs();
  const tokens = issueTokenPair(ctx, { chainId: code.chainId, clientId: code.clientId, installId: code.installId, scopes: code.scopes });
  notes.results.push("the code is spent", ...issuedResults(code.scopes));
  return {
    access_token: tokens.accessToken,
    expires_in: ACCESS_TOKEN_EXPIRES_IN_SECONDS,
    refresh_token: tokens.refreshToken,
    scope: code.scopes.join(" "),
    token_type: "bearer",
  };
}

/** `holdMs`: extra time the rotation holds its in-flight marker (an injected delay), on top of SANDBOX_REFRESH_DELAY_MS. */
async function rotateRefreshToken(ctx: SandboxContext, form: TokenForm, notes: CallNotes, holdMs: number): Promise<TokenResponseBody> {
  const { checks } = notes;
  const found = findToken(ctx, form.refresh_token ?? "", "refresh");
  if (!found) {
    checks.fail("the refresh token is known");
    // Deleted (after a reuse or an uninstall) or never issued. Counted against its install when it is remembered.
    notes.installId = ctx.store.installOfDeletedToken(sha256Hex(form.refresh_token ?? "")) ?? null;
    throw new OAuthError("invalid_grant", HINTS.refreshNotFound);
  }
  checks.pass("the refresh token is known");
  const { hash, token } = found;
  notes.installId = token.installId;

  // Another request is rotating this very token right now: fosite's serialization failure.
  if (!checks.verify(!ctx.refreshesInFlight.has(hash), "no other refresh with this token is in flight")) {
    notes.detail = "concurrent refresh with the same token";
    throw new OAuthError("invalid_request", HINTS.refreshConcurrent);
  }
  if (!checks.verify(token.status === "active", "the refresh token was not used before (single use)")) {
    // contract §3: an already-used refresh token presented again revokes the entire chain.
    ctx.store.deleteToken(hash);
    const revocation = revokeChain(ctx, token.chainId, "refresh_token_reuse");
    if (revocation.firstRevocation) ctx.store.tokenStatsOf(token.installId).chainRevocations += 1;
    notes.detail = `refresh token reused; chain revoked (${revocation.tokensRevoked} more token(s))`;
    notes.results.push(`the whole chain is revoked (${revocation.tokensRevoked} token(s) still active)`);
    throw new OAuthError("invalid_grant", HINTS.refreshAlreadyUsed);
  }
  if (!checks.verify(token.expiresAtMs > ctx.clock.nowMs(), `the refresh token has not expired (lives ${REFRESH_TOKEN_TTL_MS / 86_400_000} days)`)) {
    notes.detail = "refresh token expired (30 days)";
    throw new OAuthError("invalid_grant", HINTS.refreshExpired);
  }
  if (!checks.verify(token.clientId === form.client_id, "client_id is the one the token was issued to")) throw new OAuthError("invalid_grant", HINTS.refreshClientMismatch);
  const install = ctx.store.findInstall(token.installId);
  if (!checks.verify(install?.status === "active", "the install is active")) throw new OAuthError("invalid_grant", HINTS.refreshNotFound);

  ctx.refreshesInFlight.add(hash);
  ctx.refreshesInFlightPeak.value = Math.max(ctx.refreshesInFlightPeak.value, ctx.refreshesInFlight.size);
  try {
    // Held across an await so that a second request "at the same instant" finds the marker (tests set the delay).
    await sleep(ctx.config.refreshDelayMs + holdMs);
    const current = ctx.store.state.tokens[hash];
    if (!current || current.status !== "active") {
      checks.fail("the token is still unused after the wait");
      throw new OAuthError("invalid_request", HINTS.refreshRetry);
    }
    const live = ctx.store.findInstall(token.installId);
    if (!live || live.status !== "active") {
      checks.fail("the install is still active after the wait");
      throw new OAuthError("invalid_grant", HINTS.refreshNotFound);
    }
    current.status = "used";
    // public-facts: a successful refresh revokes every earlier access token of the grant at once. Another
    // server may let them live out their hour (switch oldAccessTokensStayValid, README decision 55).
    const keepOld = ctx.idpBehaviour.oldAccessTokensStayValid;
    if (!keepOld) revokeAccessTokensOfChain(ctx, token.chainId);
    // The new pair carries the install's granted scopes, which a re-authorization may have widened (decision 13).
    const scopes = [...live.scopes];
    const tokens = issueTokenPair(ctx, { chainId: token.chainId, clientId: token.clientId, installId: token.installId, scopes });
    ctx.store.tokenStatsOf(token.installId).refreshesIssued += 1;
    notes.results.push(
      `the used refresh token is spent; ${keepOld ? "earlier access tokens stay valid until they expire (decision 55)" : "every earlier access token of the chain is revoked"}`,
      ...issuedResults(scopes),
    );
    return {
      access_token: tokens.accessToken,
      expires_in: ACCESS_TOKEN_EXPIRES_IN_SECONDS,
      refresh_token: tokens.refreshToken,
      scope: scopes.join(" "),
      token_type: "bearer",
    };
  } finally {
    ctx.refreshesInFlight.delete(hash);
  }
}

async function handleTokenRequest(ctx: SandboxContext, request: Request, form: TokenForm, notes: CallNotes, holdMs: number): Promise<TokenResponseBody> {
  if (!notes.checks.verify(!!form.grant_type, "grant_type is present")) throw new OAuthError("invalid_request", HINTS.grantTypeMissing);
  authenticateClient(ctx, request, form, notes.checks);
  switch (form.grant_type) {
    case "authorization_code":
      await sleep(holdMs);
      return redeemAuthorizationCode(ctx, form, notes);
    case "refresh_token":
      return rotateRefreshToken(ctx, form, notes, holdMs);
    default:
      notes.checks.fail("grant_type is authorization_code or refresh_token");
      throw new OAuthError("unsupported_grant_type");
  }
}

/** The handshake of an authorization_code call, from its code's chain (README decision 52); looked up, not checked. */
function handshakeOfRequest(ctx: SandboxContext, form: TokenForm): string | null {
  if (form.grant_type !== "authorization_code") return null;
  const code = ctx.store.state.codes[sha256Hex(form.code ?? "")];
  return code ? handshakeOfChain(ctx, code.chainId) : null;
}

/** What the client got back, in words (values are never logged). */
function answerOf(outcome: string, answered: number | null, fault: AppliedTokenFault | null): string {
  if (answered === null) return "connection dropped: no answer";
  if (fault && answered === 500) return "500 server_error (an injected fault)";
  return answered === 200 ? "200 with access_token, refresh_token, token_type, expires_in and scope" : `${answered} ${outcome}`;
}

/** The install a request concerns, without performing it (for calls a fault answers before processing). */
function installOfRequest(ctx: SandboxContext, form: TokenForm): number | null {
  if (form.grant_type === "refresh_token") {
    const value = form.refresh_token ?? "";
    return findToken(ctx, value, "refresh")?.token.installId ?? ctx.store.installOfDeletedToken(sha256Hex(value)) ?? null;
  }
  if (form.grant_type === "authorization_code") return ctx.store.state.codes[sha256Hex(form.code ?? "")]?.installId ?? null;
  return null;
}

export function tokenRoutes(ctx: SandboxContext): Hono {
  const app = new Hono();

  /** Event log and per-install counters for one call. `answered` is the HTTP status the client got (null: none). */
  function recordCall(notes: CallNotes, outcome: string, answered: number | null, fault: AppliedTokenFault | null): void {
    if (notes.installId !== null) {
      const stats = ctx.store.tokenStatsOf(notes.installId);
      if (notes.grantType === "authorization_code") stats.authorizationCodeCalls += 1;
      else if (notes.grantType === "refresh_token") stats.refreshTokenCalls += 1;
    } else {
      ctx.store.state.unattributedTokenCalls += 1;
    }
    const faultLabel = fault ? (fault.mode === "answer-then-fail" ? `answer-then-fail:${fault.failWith}` : fault.mode) : null;
    ctx.store.addEvent("token", ctx.clock.now(), {
      grant_type: notes.grantType,
      install_id: notes.installId,
      outcome,
      status: answered,
      detail: notes.detail,
      fault: faultLabel,
      // What was checked, for the handshake page (README decision 52): not on refreshes, which keep-alive makes by
      // the ten thousand and which belong to no handshake, so the event log and its journal stay small.
      ...(notes.grantType === "refresh_token"
        ? {}
        : { handshake: notes.handshake, checks: notes.checks.list(), results: notes.results, answer: answerOf(outcome, answered, fault) }),
    });
    ctx.log(
      `token grant=${notes.grantType ?? "-"} install=${notes.installId ?? "-"} → ${answered ?? "connection dropped"} ${outcome}${notes.detail ? ` (${notes.detail})` : ""}${faultLabel ? ` [fault ${faultLabel}]` : ""}`,
    );
  }

  app.post("/oauth2/token", async (c) => {
    const notes: CallNotes = { grantType: null, installId: null, detail: null, handshake: null, checks: new Checks(), results: [] };
    let status: 200 | 400 | 401 | 403 = 200;
    let body: TokenResponseBody | { error: string; error_description: string };
    let fault: AppliedTokenFault | null = null;
    try {
      const form = await readForm(c.req.raw, notes.checks);
      notes.grantType = form.grant_type ?? null;
      notes.handshake = handshakeOfRequest(ctx, form);
      fault = ctx.faults.take(notes.grantType);
      if (fault && (fault.mode === "error500" || fault.mode === "drop-connection")) {
        // The request is not performed: the refresh token (or code) stays exactly as it was.
        notes.installId = installOfRequest(ctx, form);
        notes.detail = "fault injected before processing; nothing was performed";
        notes.results.push(`fault ${fault.mode}: nothing was checked or performed`);
        await sleep(fault.delayMs);
        if (fault.mode === "error500") {
          recordCall(notes, "not_performed", 500, fault);
          return c.json(SERVER_ERROR, 500, NO_STORE_HEADERS);
        }
        recordCall(notes, "not_performed", null, fault);
        return dropConnection(c);
      }
      body = shapeTokenResponse(await handleTokenRequest(ctx, c.req.raw, form, notes, fault ? fault.delayMs : 0), ctx.idpBehaviour);
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      status = error.status;
      body = errorBody(error, ctx.idpBehaviour);
    }
    const outcome = "error" in body ? body.error : "issued";
    if (fault?.mode === "answer-then-fail") {
      // Performed and committed; the client never learns the outcome.
      notes.detail = `${notes.detail ? `${notes.detail}; ` : ""}performed (${status}), answer replaced`;
      if (fault.failWith === "error500") {
        recordCall(notes, outcome, 500, fault);
        return c.json(SERVER_ERROR, 500, NO_STORE_HEADERS);
      }
      recordCall(notes, outcome, null, fault);
      return dropConnection(c);
    }
    recordCall(notes, outcome, status, fault);
    return c.json(body, status, NO_STORE_HEADERS);
  });

  // RFC 7009 revocation, as advertised by discovery. Unknown tokens still get 200, as the RFC requires.
  // Revoking a refresh token revokes its whole chain; revoking an access token revokes that token only (Hydra).
  // With the shared-grant switch a chain holds every consent of the install's session (README decision 54).
  app.post("/oauth2/revoke", async (c) => {
    let installId: number | null = null;
    try {
      const form = await readForm(c.req.raw);
      authenticateClient(ctx, c.req.raw, form);
      const value = form.token ?? "";
      const refresh = findToken(ctx, value, "refresh");
      const access = refresh ? undefined : findToken(ctx, value, "access");
      if (refresh) {
        installId = refresh.token.installId;
        revokeChain(ctx, refresh.token.chainId, "client_revocation");
      } else if (access) {
        installId = access.token.installId;
        access.token.status = "revoked";
        ctx.store.changed();
      }
    } catch (error) {
      if (error instanceof OAuthError) return c.json(error.toJSON(), error.status, NO_STORE_HEADERS);
      throw error;
    }
    ctx.store.addEvent("token", ctx.clock.now(), { grant_type: "revoke", install_id: installId, outcome: "revoked", status: 200, detail: null });
    return c.body(null, 200, NO_STORE_HEADERS);
  });

  return app;
}
