// `npm run bench -- sign-in`: bursts of wrong staff passwords, while webhooks arrive and an operator reads the dashboard.
import { performance } from "node:perf_hooks";
import { type BenchContext, percentile, summary } from "./lib";
import { computeWebhookSignature } from "../../lib/webhooks/signature";
import { sql } from "../../tests/helpers/stack";
import { signInStaffWithFetch } from "../../tests/helpers/staff-sign-in";

export async function signIn({ stack, cookie }: BenchContext) {
  const secret = stack.env.WEBHOOK_SECRET!;
  // A burst of wrong staff passwords while genuine signed webhooks arrive and an operator uses the
  // dashboard (issue 8). Each attempt comes from its own address and names its own account, the
  // worst case: no rate limit applies, so only the bound on password hashing (lib/auth/staff-sign-in.ts)
  // stands between the burst and the database pool. Every webhook must get a 2xx.
  console.log("\n== staff sign-in burst (150 wrong passwords at concurrency 50, webhooks arriving) ==");
  const dashboardP99 = async (until: () => boolean, minimum: number) => {
    const samples: number[] = [];
    while (samples.length < minimum || !until()) {
      const t0 = performance.now();
      const response = await fetch(`${stack.env.APP_URL}/dashboard/charge-points?perPage=25`, { headers: { cookie } });
      await response.text();
      samples.push(performance.now() - t0);
    }
    return samples;
  };
  const quietDashboard = await dashboardP99(() => true, 40);
  let burstDone = false;
  const webhookStatuses: number[] = [];
  const webhookMs: number[] = [];
  const webhooks = (async () => {
    const base = 2_000_000 + Math.floor(Math.random() * 10_000) * 10_000;
    let i = 0;
    while (!burstDone) {
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          const n = base + i++;
          const body = JSON.stringify({ id: `whd_burst_${n}`, type: "install.created", delivered_at: Math.floor(Date.now() / 1000), data: { install_id: n, operator_id: n, slug: `burst-${n}` } });
          const t0 = performance.now();
          const response = await fetch(`${stack.env.APP_URL}/api/webhooks`, {
            method: "POST",
            headers: { "Content-Type": "application/json", "X-Volt-Signature": computeWebhookSignature(new TextEncoder().encode(body), secret) },
            body,
          });
          await response.arrayBuffer();
          webhookStatuses.push(response.status);
          webhookMs.push(performance.now() - t0);
        }),
      );
    }
  })();
  const outcomes: Record<string, number> = {};
  const signInMs: number[] = [];
  const burst = (async () => {
    let next = 0;
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        while (next < 150) {
          const n = next++;
          const t0 = performance.now();
          const { outcome } = await signInStaffWithFetch(`attacker-${n}@example.com`, `wrong-password-${n}`, {
            appUrl: stack.env.APP_URL,
            headers: { "X-Forwarded-For": `198.51.100.${n % 250}` },
          });
          signInMs.push(performance.now() - t0);
          const kind = outcome.split(".")[0]!;
          outcomes[kind] = (outcomes[kind] ?? 0) + 1;
        }
      }),
    );
  })().finally(() => (burstDone = true));
  const [busyDashboard] = await Promise.all([dashboardP99(() => burstDone, 10), burst]);
  await webhooks;
  const sortedSignIn = [...signInMs].sort((a, b) => a - b);
  console.log(`${"sign-in answers".padEnd(44)} ${Object.entries(outcomes).map(([k, v]) => `${k}=${v}`).join("  ")}  slowest=${sortedSignIn.at(-1)?.toFixed(0)} ms`);
  summary("webhooks during the burst", webhookMs);
  console.log(`${"".padEnd(44)} non-2xx answers=${webhookStatuses.filter((s) => s < 200 || s > 299).length} of ${webhookStatuses.length}`);
  summary("GET /dashboard/charge-points, quiet", quietDashboard);
  summary("GET /dashboard/charge-points, during the burst", busyDashboard);
  const p99 = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 99);
  console.log(`${"dashboard p99 ratio (burst / quiet)".padEnd(44)} ${(p99(busyDashboard) / p99(quietDashboard)).toFixed(2)}`);

  // A burst of wrong passwords against ONE staff account from many addresses: it stays under
  // every per-address limit and locks the account. The staff member's browser that signed in
  // before holds a device cookie (lib/auth/staff-device.ts) and is counted in its own budget, so
  // it must still get in; a browser the app has not seen is refused while the lock holds.
  // The attacker retries a "busy" answer (not counted, lib/auth/staff-sign-in.ts) until the
  // attempt is checked or refused: every guess reaches the limits.
  console.log("\n== one staff account under a burst (150 wrong passwords from 150 addresses at concurrency 50, busy answers retried) ==");
  const staffEmail = stack.env.STAFF_DEV_EMAIL!;
  const staffPassword = stack.env.STAFF_DEV_PASSWORD!;
  const before = await signInStaffWithFetch(staffEmail, staffPassword, { appUrl: stack.env.APP_URL, headers: { "X-Forwarded-For": "203.0.113.200" } });
  if (!before.deviceCookie) throw new Error(`bench: the staff sign-in set no device cookie (${before.outcome})`);
  const accountOutcomes: Record<string, number> = {};
  let busyRetries = 0;
  const burstStarted = performance.now();
  let nextGuess = 0;
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      while (nextGuess < 150) {
        const n = nextGuess++;
        for (;;) {
          const { outcome } = await signInStaffWithFetch(staffEmail, `wrong-password-${n}`, {
            appUrl: stack.env.APP_URL,
            headers: { "X-Forwarded-For": `203.0.113.${n + 1}` },
          });
          const kind = outcome.split(".")[0]!;
          if (kind === "busy") {
            busyRetries++;
            await new Promise((resolve) => setTimeout(resolve, 50));
            continue;
          }
          accountOutcomes[kind] = (accountOutcomes[kind] ?? 0) + 1;
          break;
        }
      }
    }),
  );
  console.log(
    `${"burst answers".padEnd(44)} ${Object.entries(accountOutcomes).map(([k, v]) => `${k}=${v}`).join("  ")}  (busy answers retried: ${busyRetries})  in ${((performance.now() - burstStarted) / 1000).toFixed(1)} s`,
  );
  const t0 = performance.now();
  const knownBrowser = await signInStaffWithFetch(staffEmail, staffPassword, {
    appUrl: stack.env.APP_URL,
    headers: { "X-Forwarded-For": "203.0.113.201" },
    deviceCookie: before.deviceCookie,
  });
  const knownMs = performance.now() - t0;
  console.log(`${"staff, browser that signed in before".padEnd(44)} ${knownBrowser.outcome === "ok" ? "gets in" : `refused (${knownBrowser.outcome})`} in ${knownMs.toFixed(0)} ms`);
  const newBrowser = await signInStaffWithFetch(staffEmail, staffPassword, { appUrl: stack.env.APP_URL, headers: { "X-Forwarded-For": "203.0.113.202" } });
  console.log(`${"staff, a browser never seen (right password)".padEnd(44)} ${newBrowser.outcome === "ok" ? "gets in" : `refused (${newBrowser.outcome})`}`);
  // The later sections sign in as this staff member from a browser never seen: lift the lock.
  await sql("DELETE FROM rate_limits");
}
