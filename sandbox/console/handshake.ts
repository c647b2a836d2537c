// The install handshakes as the event log holds them (README decision 52): each one's requests in order, who made
// each, what was checked, what it did and what the caller got back. Read by the console's /console/handshake page.
// Everything here is derived from events, which never hold a token, code or secret (store.ts `addEvent`).
import { parseCheck, type ParsedCheck } from "../handshake.js";
import type { EventRecord } from "../store.js";

/** Who sent the request: the operator's browser, the app's server, the service (a webhook), or a test. */
export type Caller = "browser" | "app" | "service" | "test";

export interface HandshakeStep {
  seq: number;
  at: string;
  caller: Caller;
  method: string;
  path: string;
  /** What the step is, in words: "Authorization endpoint". */
  title: string;
  checks: ParsedCheck[];
  results: string[];
  answer: string;
  /** A check failed, or the request was refused or denied. */
  failed: boolean;
  /** The redirect to the app that follows an approved consent: the sandbox does not see it, the page says so. */
  redirectsToApp: boolean;
}

export type HandshakeStatus = "completed" | "failed" | "denied" | "unfinished";

export interface Handshake {
  id: string;
  startedAt: string;
  operatorId: number | null;
  installId: number | null;
  steps: HandshakeStep[];
  status: HandshakeStatus;
  /** The first step with a failed check or a refusal, and its first failed check (null: none failed). */
  failure: { step: number; title: string; check: string | null } | null;
}

function text(value: unknown): string {
  return typeof value === "string" ? value : typeof value === "number" ? String(value) : "";
}

function list(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === "string") : [];
}

const REFUSED_OUTCOMES = new Set(["rejected", "denied", "refused_page", "refused_decision", "dropped"]);
const APPROVED_OUTCOMES = new Set(["approved_new_install", "approved_reauthorized", "remembered"]);

/** Which request an event records: the method, path and caller follow from where the code writes it. */
function requestOf(event: EventRecord): Pick<HandshakeStep, "caller" | "method" | "path" | "title"> {
  const { detail } = event;
  switch (event.type) {
    case "portal":
      if (detail.by === "control") return { caller: "test", method: "POST", path: "/_sandbox/authorize-url", title: "The service builds the authorization request (for a test)" };
      return {
        caller: "browser",
        method: "POST",
        path: `/portal/operators/${text(detail.operator_id)}/${detail.action === "open" ? "open" : "connect"}`,
        title: detail.action === "open" ? "Open: the service builds the authorization request" : "Connect: the service builds the authorization request",
      };
    case "authorize":
      return { caller: "browser", method: "GET", path: "/idp/oauth2/auth", title: "Authorization endpoint" };
    case "consent":
      if (detail.outcome === "shown" || detail.outcome === "refused_page") return { caller: "browser", method: "GET", path: "/idp/consent", title: "Consent page" };
      if (detail.outcome === "remembered") return { caller: "browser", method: "GET", path: "/idp/oauth2/auth", title: "Consent remembered (the same request)" };
      return { caller: "browser", method: "POST", path: "/idp/consent", title: "The operator's decision" };
    case "webhook":
      return {
        caller: "service",
        method: "POST",
        path: text(detail.url),
        title: `${text(detail.event_type)} webhook${detail.kind === "duplicate" ? " (duplicate)" : ""}`,
      };
    case "token":
      return { caller: "app", method: "POST", path: "/idp/oauth2/token", title: `Code redemption (grant_type=${text(detail.grant_type) || "?"})` };
    case "api":
      return { caller: "app", method: text(detail.method) || "GET", path: text(detail.path), title: "Whose token is it?" };
    default:
      return { caller: "service", method: "", path: "", title: event.type };
  }
}

function stepOf(event: EventRecord): HandshakeStep {
  const checks = list(event.detail.checks).map(parseCheck);
  const outcome = text(event.detail.outcome);
  return {
    seq: event.seq,
    at: event.at,
    ...requestOf(event),
    checks,
    results: list(event.detail.results),
    answer: text(event.detail.answer),
    failed: checks.some((check) => !check.passed) || REFUSED_OUTCOMES.has(outcome),
    redirectsToApp: event.type === "consent" && APPROVED_OUTCOMES.has(outcome),
  };
}

function summarize(id: string, events: EventRecord[]): Handshake {
  // The app may ask /consumers/me again later with the same grant (its install checks): the handshake's calls end
  // with the first one answered 200.
  let identified = false;
  const kept = events.filter((event) => {
    if (event.type !== "api") return true;
    if (identified) return false;
    identified = event.detail.status === 200;
    return true;
  });
  const steps = kept.map(stepOf);
  const number = (value: unknown): number | null => (typeof value === "number" ? value : null);
  const operatorId = kept.map((e) => number(e.detail.operator_id)).find((v) => v !== null) ?? null;
  const installId = kept.map((e) => number(e.detail.install_id)).find((v) => v !== null) ?? null;
  const failedAt = steps.findIndex((step) => step.failed);
  const failedStep = steps[failedAt];
  const denied = kept.some((e) => e.type === "consent" && e.detail.outcome === "denied");
  const status: HandshakeStatus = denied ? "denied" : failedStep ? "failed" : identified ? "completed" : "unfinished";
  return {
    id,
    startedAt: kept[0]?.at ?? "",
    operatorId,
    installId,
    steps,
    status,
    failure: failedStep ? { step: failedAt + 1, title: failedStep.title, check: failedStep.checks.find((check) => !check.passed)?.text ?? null } : null,
  };
}

/** Every handshake the event log still holds (the newest 5,000 events), newest first. */
export function listHandshakes(events: readonly EventRecord[]): Handshake[] {
  const byId = new Map<string, EventRecord[]>();
  for (const event of events) {
    const id = event.detail.handshake;
    if (typeof id !== "string") continue;
    const group = byId.get(id);
    if (group) group.push(event);
    else byId.set(id, [event]);
  }
  // Events are appended in seq order, so each group is in order and the map in order of each handshake's start.
  return [...byId].map(([id, group]) => summarize(id, group)).reverse();
}
