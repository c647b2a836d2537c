// The route handler of /api/cron/<kind> (app/api/cron/[job]/route.ts), one URL per job kind of
// lib/jobs/kinds.ts, for hosts without a worker (serverless): checks the scheduler's bearer secret,
// does one run of the job (lib/jobs/engine.ts runJobNow: the fan-out, then a bounded batch of the
// queued per-install jobs within CRON_TIME_LIMIT_SECONDS), and answers with its summary. A kind
// added to lib/jobs/kinds.ts has its URL with no new route file. Platform schedulers (Vercel Cron, Cloud Scheduler, a Kubernetes CronJob with curl)
// send `Authorization: Bearer <CRON_SECRET>`. A run that leaves jobs queued says `"more": true`; the
// next call goes on from there, and a worker, if one runs too, works the same queues without conflict.
import "server-only";
import { createHash, timingSafeEqual } from "node:crypto";
import { NextResponse } from "next/server";
import { z } from "zod";
import { env } from "@/lib/env";
import { logger } from "@/lib/log";
import { shutdownSignal } from "@/lib/shutdown";
import { runJobNow } from "./engine";
import { isJobKind } from "./kinds";

export type CronAuth = "ok" | "not_configured" | "denied";

export function authorizeCronRequest(authorizationHeader: string | null): CronAuth {
  const secret = env().CRON_SECRET;
  if (!secret) return "not_configured";
  const presented = /^Bearer (.+)$/.exec(authorizationHeader ?? "")?.[1] ?? "";
  // Compare digests: equal lengths for timingSafeEqual, whatever was presented.
  const digest = (value: string) => createHash("sha256").update(value).digest();
  return timingSafeEqual(digest(presented), digest(secret)) ? "ok" : "denied";
}

/** Per-install jobs one call works at most: `?maxJobs=` (1 to 1,000) lets a scheduler choose, default 200. */
const CronQuerySchema = z.object({ maxJobs: z.coerce.number().int().min(1).max(1_000).default(200) });

/** The dynamic segment of app/api/cron/[job]: the job kind, as the URL names it. */
export type CronRouteContext = { params: Promise<{ job: string }> };

/**
 * GET or POST /api/cron/<kind>. The secret is checked before the kind, so a caller without it learns
 * nothing of which jobs exist; with it, a path that names no kind is a 404.
 */
export async function handleCronRequest(request: Request, context: CronRouteContext): Promise<NextResponse> {
  const auth = authorizeCronRequest(request.headers.get("authorization"));
  if (auth === "not_configured") return NextResponse.json({ status: "cron_not_configured" }, { status: 503 });
  if (auth === "denied") return NextResponse.json({ status: "unauthorized" }, { status: 401 });
  const { job: kind } = await context.params;
  // An own key of the declarations, never an inherited name ("constructor", "__proto__").
  if (!isJobKind(kind)) return NextResponse.json({ status: "unknown_job" }, { status: 404 });
  const query = CronQuerySchema.safeParse(Object.fromEntries(new URL(request.url).searchParams));
  if (!query.success) return NextResponse.json({ status: "invalid_query", detail: "maxJobs must be an integer from 1 to 1000" }, { status: 400 });
  try {
    const { JOB_CONCURRENCY, KEEP_ALIVE_CONCURRENCY, CRON_TIME_LIMIT_SECONDS } = env();
    const summary = await runJobNow(kind, {
      maxJobs: query.data.maxJobs,
      timeLimitMs: CRON_TIME_LIMIT_SECONDS * 1000,
      // Keep-alive waits on the identity provider, not on this function's CPU: its own number (lib/env/jobs.ts).
      concurrency: kind === "keep-alive" ? KEEP_ALIVE_CONCURRENCY : JOB_CONCURRENCY,
      // Stops between batches when the instance is asked to stop (lib/shutdown.ts).
      signal: shutdownSignal(),
    });
    return NextResponse.json(summary);
  } catch (error) {
    logger.error({ err: error, job: kind }, "cron job failed");
    return NextResponse.json({ status: "unavailable" }, { status: 503 });
  }
}
