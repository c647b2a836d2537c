// `npm run bench -- idle-memory`: the app server's resident memory once it listens, and after a minute
// with no request, before any other section sends it traffic.
import { appRssMiB, loadAverage } from "./lib";
import type { Stack } from "../lib/stack";

/** How long the server is left idle (BENCH_IDLE_SECONDS, default 60). */
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 60);
if (!Number.isInteger(IDLE_SECONDS) || IDLE_SECONDS < 0 || IDLE_SECONDS > 600) {
  console.error("bench: BENCH_IDLE_SECONDS must be a whole number of seconds from 0 to 600");
  process.exit(2);
}

export async function idleMemory(stack: Stack) {
  // What one app process holds with nothing to do: the floor a deployment sizes its memory from
  // (docs/operations.md). The stack's readiness check asked for / once, so the root page's modules are
  // loaded; nothing else was asked. RSS, as the kernel (and a container's limit) counts it.
  console.log(`\n== idle memory (the standalone server, no traffic; ${IDLE_SECONDS} s idle) ==`);
  console.log(`${"app RSS after start".padEnd(44)} ${appRssMiB(stack.appPid).toFixed(1).padStart(8)} MiB  load ${loadAverage()}`);
  await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
  console.log(`${`app RSS after ${IDLE_SECONDS} s idle`.padEnd(44)} ${appRssMiB(stack.appPid).toFixed(1).padStart(8)} MiB  load ${loadAverage()}`);
}
