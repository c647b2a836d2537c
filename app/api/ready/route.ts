// GET /api/ready: readiness. 200 when this instance can do useful work (the database answers and
// has every migration this code expects), else 503: "unready" with each check's state, or "stopping"
// once the process got SIGTERM. Never a secret (lib/health.ts).
import { NextResponse } from "next/server";
import { checkReadiness } from "@/lib/health";

export const dynamic = "force-dynamic";

export async function GET(): Promise<NextResponse> {
  const { ready, ...body } = await checkReadiness();
  return NextResponse.json(body, { status: ready ? 200 : 503, headers: { "Cache-Control": "no-store" } });
}
