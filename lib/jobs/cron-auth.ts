// Authorization for /api/cron/*: platform schedulers (Vercel Cron, Cloud Scheduler, a Kubernetes
// CronJob with curl) send `Authorization: Bearer <CRON_SECRET>`.
import "server-only";
import { createHash, timingSafeEqual } from "node:crypto";
import { env } from "@/lib/env";

export type CronAuth = "ok" | "not_configured" | "denied";

export function authorizeCronRequest(authorizationHeader: string | null): CronAuth {
  const secret = env().CRON_SECRET;
  if (!secret) return "not_configured";
  const presented = /^Bearer (.+)$/.exec(authorizationHeader ?? "")?.[1] ?? "";
  // Compare digests: equal lengths for timingSafeEqual, whatever was presented.
  const digest = (value: string) => createHash("sha256").update(value).digest();
  return timingSafeEqual(digest(presented), digest(secret)) ? "ok" : "denied";
}
