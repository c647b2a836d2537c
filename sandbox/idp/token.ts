// POST {issuer}/oauth2/token: the token endpoint, behaving like Hydra/fosite (public-facts.md).
// - application/x-www-form-urlencoded only; client_secret_post only (contract §5.2).
// - authorization_code: single use; a second use revokes the tokens minted from the first (fosite).
// - refresh_token: rotation; the used token dies, every earlier access token of the chain is revoked,
//   and presenting a used refresh token revokes the whole chain (contract §3).
// Every call is written to the event log with grant type, install_id and outcome: never a token, code or secret,
// and counted per install for GET /_sandbox/installs/:id/token-stats. Armed faults (faults.ts) are applied here.
import { Hono } from "hono";
import { z } from "zod";
import { clientExists, clientSecretMatches } from "../app-registration.js";
import type { SandboxContext } from "../context.js";
import { dropConnection } from "../drop-connection.js";
import { sha256Hex } from "../crypto.js";
import type { AppliedTokenFault } from "../faults.js";
import { ACCESS_TOKEN_EXPIRES_IN_SECONDS } from "../lifetimes.js";
import { GENERIC_ERROR_DESCRIPTION, type IdpBehaviour } from "./behaviour.js";
import { HINTS, OAuthError } from "./errors.js";
import { findToken, issueTokenPair, revokeAccessTokensOfChain, revokeChain } from "./tokens.js";

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
async function readForm(request: Request): Promise<TokenForm> {
  const contentType = request.headers.get("content-type") ?? "";
  if (!/^application\/x-www-form-urlencoded\s*(;|$)/i.test(contentType)) {
    throw new OAuthError("invalid_request", HINTS.notAForm);
  }
  const params = new URLSearchParams(await request.text());
  const first: Record<string, string> = {};
  for (const [key, value] of params) if (!(key in first)) first[key] = value;
  if (Object.keys(first).length === 0) throw new OAuthError("invalid_request", HINTS.emptyBody);
  return tokenFormSchema.parse(first);
}

/** client_secret_post only. Credentials in an Authorization: Basic header are refused as Hydra refuses them. */
function authenticateClient(ctx: SandboxContext, request: Request, form: TokenForm): void {
  const registered = ctx.config.client;
  const authorization = request.headers.get("authorization");
  if (authorization && /^basic\s+/i.test(authorization)) {
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
  if (!form.client_id || form.client_id !== registered.clientId || !clientExists(ctx)) throw new OAuthError("invalid_client", HINTS.clientNotFound);
  // Wrong or missing secret (including one replaced by a re-issue): fosite answers with the bare description.
  if (!form.client_secret || !clientSecretMatches(ctx, form.client_secret)) throw new OAuthError("invalid_client");
}

function redeemAuthorizationCode(ctx: SandboxContext, form: TokenForm, notes: CallNotes): TokenResponseBody {
  const codeHash = sha256Hex(form.code ?? "");
  const code = ctx.store.state.codes[codeHash];
  if (!code) throw new OAuthError("invalid_grant");
  notes.installId = code.installId;

  if (code.usedAtMs !== null) {
    // fosite: "If an authorize code is used twice, we revoke all refresh and access tokens associated with this request."
    const revocation = revokeChain(ctx, code.chainId, "code_reuse");
    if (revocation.firstRevocation) ctx.store.tokenStatsOf(code.installId).chainRevocations += 1;
    notes.detail = `code reused; ${revocation.tokensRevoked} token(s) of its chain revoked`;
    throw new OAuthError("invalid_grant", HINTS.codeAlreadyUsed);
  }
  if (code.expiresAtMs <= ctx.clock.nowMs()) {
    notes.detail = "code expired (1 minute)";
    throw new OAuthError("invalid_grant"); // fosite wraps the expiry without a hint
  }
  if (code.clientId !== form.client_id) throw new OAuthError("invalid_grant", HINTS.codeClientMismatch);
  if (code.redirectUri !== form.redirect_uri) {
    notes.detail = "redirect_uri differs from the authorization request";
    throw new OAuthError("invalid_grant", HINTS.codeRedirectMismatch);
  }
  if (form.code_verifier) {
    // No code_challenge was ever accepted for this client, so there is no PKCE data to check against.
    notes.detail = "code_verifier sent without a code_challenge";
    throw new OAuthError("invalid_grant", HINTS.pkceDataMissing);
  }
  const install = ctx.store.findInstall(code.installId);
  if (!install || install.status !== "active") throw new OAuthError("invalid_grant");

  code.usedAtMs = ctx.clock.nowMs();
  const tokens = issueTokenPair(ctx, { chainId: code.chainId, clientId: code.clientId, installId: code.installId, scopes: code.scopes });
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
  const found = findToken(ctx, form.refresh_token ?? "", "refresh");
  if (!found) {
    // Deleted (after a reuse or an uninstall) or never issued. Counted against its install when it is remembered.
    notes.installId = ctx.store.installOfDeletedToken(sha256Hex(form.refresh_token ?? "")) ?? null;
    throw new OAuthError("invalid_grant", HINTS.refreshNotFound);
  }
  const { hash, token } = found;
  notes.installId = token.installId;

  // Another request is rotating this very token right now: fosite's serialization failure.
  if (ctx.refreshesInFlight.has(hash)) {
    notes.detail = "concurrent refresh with the same token";
    throw new OAuthError("invalid_request", HINTS.refreshConcurrent);
  }
  if (token.status !== "active") {
    // contract §3: an already-used refresh token presented again revokes the entire chain.
    ctx.store.deleteToken(hash);
    const revocation = revokeChain(ctx, token.chainId, "refresh_token_reuse");
    if (revocation.firstRevocation) ctx.store.tokenStatsOf(token.installId).chainRevocations += 1;
    notes.detail = `refresh token reused; chain revoked (${revocation.tokensRevoked} more token(s))`;
    throw new OAuthError("invalid_grant", HINTS.refreshAlreadyUsed);
  }
  if (token.expiresAtMs <= ctx.clock.nowMs()) {
    notes.detail = "refresh token expired (30 days)";
    throw new OAuthError("invalid_grant", HINTS.refreshExpired);
  }
  if (token.clientId !== form.client_id) throw new OAuthError("invalid_grant", HINTS.refreshClientMismatch);
  const install = ctx.store.findInstall(token.installId);
  if (!install || install.status !== "active") throw new OAuthError("invalid_grant", HINTS.refreshNotFound);

  ctx.refreshesInFlight.add(hash);
  ctx.refreshesInFlightPeak.value = Math.max(ctx.refreshesInFlightPeak.value, ctx.refreshesInFlight.size);
  try {
    // Held across an await so that a second request "at the same instant" finds the marker (tests set the delay).
    await sleep(ctx.config.refreshDelayMs + holdMs);
    const current = ctx.store.state.tokens[hash];
    if (!current || current.status !== "active") throw new OAuthError("invalid_request", HINTS.refreshRetry);
    const live = ctx.store.findInstall(token.installId);
    if (!live || live.status !== "active") throw new OAuthError("invalid_grant", HINTS.refreshNotFound);
    current.status = "used";
    // public-facts: a successful refresh revokes every earlier access token of the grant at once.
    revokeAccessTokensOfChain(ctx, token.chainId);
    // The new pair carries the install's granted scopes, which a re-authorization may have widened (decision 13).
    const scopes = [...live.scopes];
    const tokens = issueTokenPair(ctx, { chainId: token.chainId, clientId: token.clientId, installId: token.installId, scopes });
    ctx.store.tokenStatsOf(token.installId).refreshesIssued += 1;
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
  if (!form.grant_type) throw new OAuthError("invalid_request", HINTS.grantTypeMissing);
  authenticateClient(ctx, request, form);
  switch (form.grant_type) {
    case "authorization_code":
      await sleep(holdMs);
      return redeemAuthorizationCode(ctx, form, notes);
    case "refresh_token":
      return rotateRefreshToken(ctx, form, notes, holdMs);
    default:
      throw new OAuthError("unsupported_grant_type");
  }
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
    });
    ctx.log(
      `token grant=${notes.grantType ?? "-"} install=${notes.installId ?? "-"} → ${answered ?? "connection dropped"} ${outcome}${notes.detail ? ` (${notes.detail})` : ""}${faultLabel ? ` [fault ${faultLabel}]` : ""}`,
    );
  }

  app.post("/oauth2/token", async (c) => {
    const notes: CallNotes = { grantType: null, installId: null, detail: null };
    let status: 200 | 400 | 401 | 403 = 200;
    let body: TokenResponseBody | { error: string; error_description: string };
    let fault: AppliedTokenFault | null = null;
    try {
      const form = await readForm(c.req.raw);
      notes.grantType = form.grant_type ?? null;
      fault = ctx.faults.take(notes.grantType);
      if (fault && (fault.mode === "error500" || fault.mode === "drop-connection")) {
        // The request is not performed: the refresh token (or code) stays exactly as it was.
        notes.installId = installOfRequest(ctx, form);
        notes.detail = "fault injected before processing; nothing was performed";
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
