// One route handler for every /api/cron/* job, for hosts without a worker (serverless): checks the
// scheduler's bearer secret, does one run of the job (lib/jobs/engine.ts runJobNow: the fan-out, then
// a bounded batch of the queued per-install jobs within CRON_TIME_LIMIT_SECONDS), and answers with
// its summary. Platform schedulers (Vercel Cron, Cloud Scheduler, a Kubernetes CronJob with curl)
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
import type { JobKind } from "./enqueue";

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

export function cronRoute(kind: JobKind) {
  return async function handle(request: Request): Promise<NextResponse> {
    const auth = authorizeCronRequest(request.headers.get("authorization"));
    if (auth === "not_configured") return NextResponse.json({ status: "cron_not_configured" }, { status: 503 });
    if (auth === "denied") return NextResponse.json({ status: "unauthorized" }, { status: 401 });
    const query = CronQuerySchema.safeParse(Object.fromEntries(new URL(request.url).searchParams));
    if (!query.success) return NextResponse.json({ status: "invalid_query", detail: "maxJobs must be an integer from 1 to 1000" }, { status: 400 });
    try {
      const { JOB_CONCURRENCY, CRON_TIME_LIMIT_SECONDS } = env();
      const summary = await runJobNow(kind, {
        maxJobs: query.data.maxJobs,
        timeLimitMs: CRON_TIME_LIMIT_SECONDS * 1000,
        concurrency: JOB_CONCURRENCY,
        // Stops between batches when the instance is asked to stop (lib/shutdown.ts).
        signal: shutdownSignal(),
      });
      return NextResponse.json(summary);
    } catch (error) {
      logger.error({ err: error, job: kind }, "cron job failed");
      return NextResponse.json({ status: "unavailable" }, { status: 503 });
    }
  };
}
