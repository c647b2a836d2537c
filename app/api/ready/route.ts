// GET /api/ready: readiness. 200 when this instance can do useful work (the database answers and
// has every migration this code expects), else 503; the body names each check's state, never a
// secret (lib/health.ts).
import { NextResponse } from "next/server";
import { checkReadiness } from "@/lib/health";

export const dynamic = "force-dynamic";

export async function GET(): Promise<NextResponse> {
  const readiness = await checkReadiness();
  return NextResponse.json(
    { status: readiness.ready ? "ready" : "unready", checks: readiness.checks },
    { status: readiness.ready ? 200 : 503, headers: { "Cache-Control": "no-store" } },
  );
}
