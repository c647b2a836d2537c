// How far the app's clock is from the service's, read from the `Date` header of the service's answers
// (RFC 9110 §6.6.1: the origin's clock when it made the answer), the API's and the identity provider's.
//
// Why it matters: the app checks a webhook's `delivered_at` against its own clock (contract §6.4,
// WEBHOOK_TOLERANCE_SECONDS, spec-gap A6). An app clock further off than that window refuses every
// delivery, correctly, and nothing else would say why. So each answer updates one figure per process
// (memory only: no write per call), /api/ready shows it (lib/health.ts), and when it nears the window
// one staff alert fires (lib/alerts/incidents.ts, incident `clock:<host>`: a clock is a machine's).
// The figure is the latest answer's, not an average: a clock that NTP just fixed shows fixed at once.
import "server-only";
import { hostname } from "node:os";
import { alertOnClockInSync, alertOnClockSkewed } from "@/lib/alerts/incidents";
import { env } from "@/lib/env";
import { logger } from "@/lib/log";

export type ServiceClockSource = "api" | "identity-provider";

export type ServiceClockReading = {
  /** The service's clock minus the app's, in whole seconds: positive when the app's clock is behind. Null before any answer. */
  skewSeconds: number | null;
  source: ServiceClockSource | null;
  /** When the answer arrived (ISO 8601). */
  measuredAt: string | null;
  /** Set when |skewSeconds| reaches warnAtSeconds(): what to do about it. */
  warning?: string;
};

let latest: { skewSeconds: number; source: ServiceClockSource; measuredAt: Date } | undefined;

/**
 * Half the webhook window (docs/spec-gaps.md A213): still time to fix the clock before any delivery
 * is refused, and far above what the estimate's own error can be (the header's whole second and
 * half a round trip).
 */
export function warnAtSeconds(): number {
  return Math.ceil(env().WEBHOOK_TOLERANCE_SECONDS / 2);
}

/**
 * Notes one answer's Date header. `sentAtMs` and `receivedAtMs` are this process's clock around the
 * request: the service made the answer somewhere between, so the middle is the best guess of when.
 * Never throws: a missing or odd header, or a failing alert, must not fail the call that carried it.
 */
export function noteServiceDate(dateHeader: string | null, source: ServiceClockSource, sentAtMs: number, receivedAtMs: number): void {
  const serviceMs = dateHeader ? Date.parse(dateHeader) : Number.NaN;
  if (!Number.isFinite(serviceMs)) return;
  // The header is whole seconds, cut down (RFC 9110 §5.6.7): the service's instant is 0.5 s later on average.
  const skewSeconds = Math.round((serviceMs + 500 - (sentAtMs + receivedAtMs) / 2) / 1000);
  latest = { skewSeconds, source, measuredAt: new Date(receivedAtMs) };
  tellStaffSoon();
}

/** This process's latest reading, with a warning when it nears the webhook window. */
export function readServiceClock(): ServiceClockReading {
  if (!latest) return { skewSeconds: null, source: null, measuredAt: null };
  const reading: ServiceClockReading = { skewSeconds: latest.skewSeconds, source: latest.source, measuredAt: latest.measuredAt.toISOString() };
  if (Math.abs(latest.skewSeconds) >= warnAtSeconds()) reading.warning = describeSkew(latest.skewSeconds);
  return reading;
}

export function describeSkew(skewSeconds: number): string {
  const tolerance = env().WEBHOOK_TOLERANCE_SECONDS;
  return (
    `the app's clock is ${Math.abs(skewSeconds)} s ${skewSeconds > 0 ? "behind" : "ahead of"} the service's (its Date headers): ` +
    `webhooks more than ${tolerance} s off this clock are refused (WEBHOOK_TOLERANCE_SECONDS). Fix this host's time sync (NTP)`
  );
}

/**
 * What this process last told the alerts: undefined until its first reading. It changes at |skew| ≥
 * warnAtSeconds() (skewed) and below half of that (in sync), so a skew that hovers at the line does
 * not flap the incident. Only a change costs a statement; the incident itself is shared by every
 * process of the host, so each of them may open or close it and it alerts once.
 */
let told: "skewed" | "in-sync" | undefined;
/** The telling under way: one at a time; it goes on while the latest reading says something new. */
let telling: Promise<void> | undefined;

function tellStaffSoon(): void {
  telling ??= tellStaff().finally(() => (telling = undefined));
}

async function tellStaff(): Promise<void> {
  for (;;) {
    if (!latest) return;
    const { skewSeconds, source } = latest;
    try {
      const warnAt = warnAtSeconds();
      const now = Math.abs(skewSeconds) >= warnAt ? "skewed" : Math.abs(skewSeconds) < warnAt / 2 ? "in-sync" : told;
      if (now === undefined || now === told) return;
      if (now === "skewed") {
        logger.warn({ skewSeconds, source }, describeSkew(skewSeconds));
        await alertOnClockSkewed(hostname(), { skewSeconds, source, toleranceSeconds: env().WEBHOOK_TOLERANCE_SECONDS, summary: describeSkew(skewSeconds) });
      } else {
        await alertOnClockInSync(hostname(), skewSeconds);
      }
      told = now;
    } catch (error) {
      // Tried again with the next answer.
      logger.warn({ err: error }, "could not record the clock's skew against the service's for the staff alert");
      return;
    }
  }
}
