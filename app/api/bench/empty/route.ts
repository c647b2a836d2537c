// POST /api/bench/empty: an empty route handler, the baseline `npm run bench` measures the webhook
// route against (the framework's own cost in the same build: routing, reading the body, a JSON
// answer). It exists only while BENCH_EMPTY_ROUTE=on, which only scripts/bench.ts sets; otherwise
// it answers 404 like any unknown address, so a production deployment never serves it.
import { NextResponse } from "next/server";
import { env } from "@/lib/env";

export const dynamic = "force-dynamic";

export async function POST(request: Request): Promise<NextResponse> {
  if (env().BENCH_EMPTY_ROUTE !== "on") return NextResponse.json({ status: "not_found" }, { status: 404 });
  // The webhook route reads the whole body before it verifies it; so does its baseline.
  await request.arrayBuffer();
  return NextResponse.json({ status: "processed" });
}
