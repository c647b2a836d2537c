// Scope rules (contract §2): "<resource>" or "<resource>:<permission>", a bare resource means read only,
// and offline_access is added by the service and grants no data access by itself.
import { requestedScopes } from "./app-registration.js";
import { OFFLINE_ACCESS } from "./config.js";
import type { SandboxContext } from "./context.js";
import { EXTRA_LISTS } from "./lists/index.js";

/** Everything the identity provider knows about; discovery lists it. */
export const SCOPES_SUPPORTED = [
  "charge-points:read",
  "charge-points:write",
  "charge-transactions:read",
  "teams",
  "teams:read",
  "teams:write",
  "energy:read",
  // Each extra list's scope (lists/index.ts), bare and `:read` as for teams.
  ...EXTRA_LISTS.flatMap((list) => [list.scopeResource, `${list.scopeResource}:read`]),
  OFFLINE_ACCESS,
];

/** Plain-language explanations shown next to the exact scope list on the consent page. */
export const SCOPE_DESCRIPTIONS: Record<string, string> = {
  "charge-points:read": "See your charge points, their location, state and connectors.",
  "charge-points:write": "Change your charge points.",
  "charge-transactions:read": "See charge sessions (charge history) on your network.",
  teams: "See your teams.",
  "teams:read": "See your teams.",
  "teams:write": "See and change your teams.",
  "energy:read": "See energy data of your charge points (beta).",
  ...Object.fromEntries(EXTRA_LISTS.flatMap((list) => [list.scopeResource, `${list.scopeResource}:read`].map((scope) => [scope, list.description]))),
  [OFFLINE_ACCESS]: "Keep access while you are away (the app may refresh its tokens). Grants no data by itself.",
};

/** The scopes the app is registered for right now: what it requests, plus offline_access which the service adds. */
export function registeredScopes(ctx: SandboxContext): string[] {
  return [...requestedScopes(ctx), OFFLINE_ACCESS];
}

/** The scope string the portal puts in the authorization request and the consent screen lists. */
export function portalScopeString(ctx: SandboxContext): string {
  return registeredScopes(ctx).join(" ");
}

export function parseScopeString(value: string): string[] {
  return value.split(" ").filter((scope) => scope.length > 0);
}

/**
 * Sandbox decision (not shown in the contract): reading resource R is allowed by "R", "R:read" or "R:write"
 * (write implies read); "R:delete" alone does not allow reading.
 */
export function allowsRead(granted: readonly string[], resource: string): boolean {
  return granted.some((scope) => scope === resource || scope === `${resource}:read` || scope === `${resource}:write`);
}

/**
 * Sandbox decision (README decision 45): changing resource R needs "R:write"; "R", "R:read" (read only, contract §2) and
 * "R:delete" do not allow it.
 */
export function allowsWrite(granted: readonly string[], resource: string): boolean {
  return granted.includes(`${resource}:write`);
}

/** Data scopes only (what the consumer record lists): offline_access is about tokens, not data. */
export function dataScopes(scopes: readonly string[]): string[] {
  return scopes.filter((scope) => scope !== OFFLINE_ACCESS);
}
