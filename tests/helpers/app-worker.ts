// A separate OS process running the app's own lib/ code, for tests that need more than one
// process (a second app instance) or a process that dies at a chosen moment.
//
//   node --conditions=react-server --import tsx tests/helpers/app-worker.ts <command> <installRowId> [count]
//
// Commands:
//   call <id> <n>             n concurrent API calls (withAccessToken + GET /consumers/me); prints a JSON summary
//   crash-after-answer <id>   one call; dies (SIGKILL) right after the token endpoint answered, before the commit
//   crash-before-send <id>    one call; dies right after the refresh marker was committed, before sending
//   pause-after-answer <id>   one call; prints PAUSED when the token endpoint answered, waits for a line on stdin
//   keep-alive [maxJobs]      one keep-alive run by hand (lib/jobs/engine.ts runJobNow: the fan-out, then
//                             the queued refreshes, as a cron route does it); prints its summary
//   reconcile-sweep [maxJobs] one reconcile sweep run by hand, the same way; prints its summary
//   fan-out <kind>            the fan-out alone (keep-alive or reconcile): enqueues, works nothing; prints it
//   work <kind> [maxJobs] [runs] [timeLimitMs]
//                             works the kind's queued per-install jobs, without a fan-out; prints the summary.
//                             runs > 1: that many runs in this one process, each after a line on stdin
//                             (a test changes the queue in between, without paying for a new process).
//                             timeLimitMs: the run's limit, as CRON_TIME_LIMIT_SECONDS gives a cron route (default 60 s)
//   receive-and-die <body> <signature>
//                             receives one webhook delivery (body base64url) as the route does, prints the
//                             answer, and dies (SIGKILL) at once: nothing kept in memory survives it
//   dashboard-read <id>       what the dashboard reads for the install (charge points), cold: no warm-up,
//                             so this process discovers the identity provider on its first token request
//   reconcile <id>            one reconcile of the install; prints its outcome
//   probe-reauth <id>         one forced re-authorization probe (as staff ask for it); prints its outcome
//   callback <query>          the redirect_uri's work (completeInstall) for a callback query string
//   reencrypt                 re-encrypts all grants under the current key
//   ready                     one readiness check (lib/health.ts); prints it with how long it took
//   api-burst <id> <n> [priority] [gated]
//                             n concurrent reads of one charge point (withAccessToken + GET /charge-points),
//                             "interactive" (default) or "background"; prints results and the client's counters.
//                             "gated": prints READY once started, and begins when a line arrives on stdin
//   walk <id,id,...> <ms> [perPage]
//                             walks each install's charge list page by page, flat out, as background work,
//                             over and over for ms milliseconds (one walker per install); prints each
//                             install's counters (the bench's rate budget section)
//   spend <id> <n>            n requests with the install's token straight to the API, past the client and
//                             its budget (another client of the same install); prints the statuses
//   fairness <A> <B> <nA> <nB>
//                             in one process: nA background reads for install A until A waits for budget,
//                             then nB interactive reads for install B; prints B's counters and how many of
//                             A's reads were still waiting when B's were all done
//   sync <id> <perPage> [stop-after|kill-after <n>]
//                             one syncInstall run (lib/sync/) with that page size; prints its summary.
//                             stop-after n: the run's stop signal fires once n list pages have been
//                             answered (it stops before the next request); kill-after n: the process
//                             SIGKILLs itself as it is about to send list request n + 1
//   sync-runs <id> <perPage> <n>
//                             n syncInstall runs of the install, one after the other; prints their outcomes
//   sync-many <id,id,...> <perPage>
//                             one syncInstall run per install, all at once in this process; prints each
//                             summary, how long each took, and the client's counters per install (the
//                             bench's sync section)
//   purge                     one retention purge of revoked installs' synced data; prints its summary
//   deliver-alerts [maxJobs]  delivers the queued alerts (lib/jobs/engine.ts deliverQueuedAlerts, as the worker
//                             and the cron route do); prints {delivered, failed, more}
import { createInterface } from "node:readline";
import { InstallFailedError, completeInstall } from "../../lib/installs/connect";
import { fetchInstallChargePoints, fetchInstallSummary } from "../../lib/installs/dashboard";
import { probeReauthorization } from "../../lib/installs/reauth";
import { reconcileInstall } from "../../lib/installs/reconcile";
import { deliverQueuedAlerts, fanOut, runJobNow, workQueuedJobs } from "../../lib/jobs/engine";
import { stopJobEngine } from "../../lib/jobs/enqueue";
import type { JobKind } from "../../lib/jobs/kinds";
import { withAccessToken } from "../../lib/oauth/access";
import { ensureOAuthConfiguration } from "../../lib/oauth/token-endpoint";
import { reencryptAllGrants } from "../../lib/oauth/token-vault";
import { checkReadiness } from "../../lib/health";
import { db } from "../../lib/db/client";
import { apiCounters, fetchChargePoints, fetchCharges, fetchConsumer, type ApiCounters } from "../../lib/partner-api/client";
import { walkPages } from "../../lib/partner-api/paginate";
import type { Priority } from "../../lib/partner-api/budget";
import { purgeRevokedInstallData, syncInstall } from "../../lib/sync";

const [command, installRowId = "", countArg = "1"] = process.argv.slice(2);
const realFetch = globalThis.fetch;
const isTokenEndpoint = (input: Parameters<typeof fetch>[0]) =>
  (typeof input === "string" ? input : input instanceof URL ? input.href : input.url).endsWith("/oauth2/token");

function interceptTokenEndpoint(onAnswer: (response: Response) => Promise<Response>, beforeSend?: () => void) {
  globalThis.fetch = async (input, init) => {
    if (!isTokenEndpoint(input)) return realFetch(input, init);
    beforeSend?.();
    const response = await realFetch(input, init);
    const body = await response.text(); // the answer has fully arrived
    return onAnswer(new Response(body, { status: response.status, headers: response.headers }));
  };
}

async function callOnce() {
  return withAccessToken(installRowId, (token, call) => fetchConsumer(token, call));
}

/** One read through the whole client: the install's token, its budget, retries. */
function readOneChargePoint(id: string, priority: Priority) {
  return withAccessToken(id, (token, call) => fetchChargePoints(token, call, { page: 0, perPage: 1 }), { priority });
}

async function settle(promises: Promise<unknown>[]) {
  const errors: Record<string, number> = {};
  let ok = 0;
  for (const r of await Promise.allSettled(promises)) {
    if (r.status === "fulfilled") ok += 1;
    else errors[describe(r.reason)] = (errors[describe(r.reason)] ?? 0) + 1;
  }
  return { ok, errors };
}

function describe(error: unknown) {
  if (error instanceof Error) return `${error.name}${"kind" in error ? `:${String(error.kind)}` : ""}${"reason" in error ? `:${String(error.reason)}` : ""}`;
  return String(error);
}

switch (command) {
  case "call": {
    const count = Number(countArg);
    // Warm up without touching the token (it may be the expired one under test): open the
    // database pool and discover the identity provider, so latencies are not cold-start times.
    await Promise.all(Array.from({ length: 10 }, () => db().$queryRaw`SELECT 1`));
    await ensureOAuthConfiguration();
    const started = performance.now();
    const results = await Promise.allSettled(
      Array.from({ length: count }, async () => {
        const t0 = performance.now();
        await callOnce();
        return performance.now() - t0;
      }),
    );
    const errors: Record<string, number> = {};
    const latencies: number[] = [];
    for (const r of results) {
      if (r.status === "fulfilled") latencies.push(r.value);
      else errors[describe(r.reason)] = (errors[describe(r.reason)] ?? 0) + 1;
    }
    console.log(JSON.stringify({ ok: latencies.length, errors, latencies, wallMs: performance.now() - started }));
    break;
  }
  case "crash-after-answer":
    interceptTokenEndpoint(async () => {
      process.kill(process.pid, "SIGKILL");
      return new Promise<Response>(() => {});
    });
    await callOnce();
    break;
  case "crash-before-send":
    interceptTokenEndpoint(async (r) => r, () => process.kill(process.pid, "SIGKILL"));
    await callOnce();
    break;
  case "pause-after-answer": {
    const lines = createInterface({ input: process.stdin });
    const next = () => new Promise<void>((resolve) => lines.once("line", () => resolve()));
    interceptTokenEndpoint(async (response) => {
      console.log("PAUSED");
      await next();
      return response;
    });
    try {
      await callOnce();
      console.log(JSON.stringify({ ok: 1 }));
    } catch (error) {
      console.log(JSON.stringify({ ok: 0, error: describe(error) }));
    }
    lines.close();
    break;
  }
  case "keep-alive":
  case "reconcile-sweep": {
    // Here the second argument is the batch limit, not an install.
    const kind: JobKind = command === "keep-alive" ? "keep-alive" : "reconcile";
    console.log(JSON.stringify(await runJobNow(kind, { maxJobs: Number(installRowId || 1000), timeLimitMs: 60_000, concurrency: 10 })));
    await stopJobEngine(1_000);
    break;
  }
  case "work": {
    const runs = Number(process.argv[5] ?? 1);
    const lines = runs > 1 ? createInterface({ input: process.stdin }) : undefined;
    for (let run = 1; run <= runs; run++) {
      if (run > 1) await new Promise<void>((resolve) => lines!.once("line", () => resolve()));
      const timeLimitMs = Number(process.argv[6] ?? 60_000);
      console.log(JSON.stringify(await workQueuedJobs(installRowId as JobKind, { maxJobs: Number(process.argv[4] ?? 1000), timeLimitMs, concurrency: 10 })));
    }
    lines?.close();
    await stopJobEngine(1_000);
    break;
  }
  case "receive-and-die": {
    const { receiveWebhook } = await import("../../lib/webhooks/receive");
    const answer = await receiveWebhook(Buffer.from(installRowId, "base64url"), countArg);
    console.log(JSON.stringify(answer.body));
    process.kill(process.pid, "SIGKILL");
    break;
  }
  case "fan-out":
    console.log(JSON.stringify(await fanOut(installRowId as JobKind)));
    await stopJobEngine(1_000);
    break;
  case "dashboard-read": {
    const install = await fetchInstallSummary(installRowId);
    if (!install) throw new Error(`no install ${installRowId}`);
    const read = await fetchInstallChargePoints(install, { page: 0, perPage: 10 });
    console.log(JSON.stringify(read.ok ? { ok: true } : read));
    break;
  }
  case "reconcile":
    console.log(JSON.stringify({ outcome: await reconcileInstall(installRowId) }));
    break;
  case "probe-reauth":
    console.log(JSON.stringify({ outcome: await probeReauthorization(installRowId, "staff", { force: true }) }));
    break;
  case "callback": {
    // Here the second argument is the callback's query string, not an install.
    try {
      console.log(JSON.stringify({ ok: true, ...(await completeInstall(new URLSearchParams(installRowId))) }));
    } catch (error) {
      if (!(error instanceof InstallFailedError)) throw error;
      console.log(JSON.stringify({ ok: false, reason: error.reason }));
    }
    break;
  }
  case "reencrypt":
    console.log(JSON.stringify(await reencryptAllGrants(db())));
    break;
  case "ready": {
    const started = performance.now();
    const readiness = await checkReadiness();
    console.log(JSON.stringify({ ...readiness, ms: performance.now() - started }));
    break;
  }
  case "api-burst": {
    const priority = (process.argv[5] ?? "interactive") as Priority;
    await Promise.all(Array.from({ length: 5 }, () => db().$queryRaw`SELECT 1`));
    if (process.argv[6] === "gated") {
      const lines = createInterface({ input: process.stdin });
      console.log("READY");
      await new Promise<void>((resolve) => lines.once("line", () => resolve()));
      lines.close();
    }
    const started = performance.now();
    const result = await settle(Array.from({ length: Number(countArg) }, () => readOneChargePoint(installRowId, priority)));
    const counters: ApiCounters = apiCounters(installRowId);
    console.log(JSON.stringify({ ...result, counters, wallMs: performance.now() - started }));
    break;
  }
  case "walk": {
    const ids = installRowId.split(",");
    const stopAt = Date.now() + Number(countArg);
    const perPage = Number(process.argv[5] ?? 10);
    const errors: Record<string, number> = {};
    await Promise.all(
      ids.map(async (id) => {
        while (Date.now() < stopAt) {
          try {
            const pages = walkPages((page) => withAccessToken(id, (token, call) => fetchCharges(token, call, { page, perPage }), { priority: "background" }));
            for await (const page of pages) {
              void page;
              if (Date.now() >= stopAt) break;
            }
          } catch (error) {
            errors[describe(error)] = (errors[describe(error)] ?? 0) + 1;
          }
        }
      }),
    );
    console.log(JSON.stringify({ errors, counters: Object.fromEntries(ids.map((id) => [id, apiCounters(id)])) }));
    break;
  }
  case "spend": {
    const statuses: Record<string, number> = {};
    await withAccessToken(installRowId, async (token) => {
      for (let i = 0; i < Number(countArg); i++) {
        const response = await fetch(new URL("/api/v1/charge-points?page=0&perPage=1", process.env.PARTNER_API_BASE_URL), { headers: { Authorization: `Bearer ${token}` } });
        await response.arrayBuffer();
        statuses[response.status] = (statuses[response.status] ?? 0) + 1;
      }
    });
    console.log(JSON.stringify({ statuses }));
    break;
  }
  case "fairness": {
    const [installA, installB, nA, nB] = process.argv.slice(3);
    const aReads = Array.from({ length: Number(nA) }, () => readOneChargePoint(installA!, "background"));
    let aDone = 0;
    for (const read of aReads) void read.then(() => (aDone += 1), () => (aDone += 1));
    // A is saturated once its reads have to wait for budget.
    while (apiCounters(installA!).waitedForBudget === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    const b = await settle(Array.from({ length: Number(nB) }, () => readOneChargePoint(installB!, "interactive")));
    const aWaitingWhenBDone = Number(nA) - aDone;
    console.log(JSON.stringify({ b, bCounters: apiCounters(installB!), aWaitingWhenBDone, aCounters: apiCounters(installA!) }));
    // A's remaining reads are abandoned with the process.
    break;
  }
  case "sync": {
    const [mode, limit] = process.argv.slice(5);
    const stop = new AbortController();
    const isListRequest = (input: Parameters<typeof fetch>[0]) =>
      /\/api\/v1\/(charge-points|charges|teams)\?/.test(typeof input === "string" ? input : input instanceof URL ? input.href : input.url);
    let sent = 0;
    let answered = 0;
    globalThis.fetch = async (input, init) => {
      if (!isListRequest(input)) return realFetch(input, init);
      if (mode === "kill-after" && sent >= Number(limit)) {
        process.kill(process.pid, "SIGKILL");
        return new Promise<Response>(() => {});
      }
      sent += 1;
      const response = await realFetch(input, init);
      answered += 1;
      if (mode === "stop-after" && answered >= Number(limit)) stop.abort();
      return response;
    };
    console.log(JSON.stringify(await syncInstall(installRowId, { perPage: Number(countArg), signal: stop.signal })));
    break;
  }
  case "sync-runs": {
    const outcomes: string[] = [];
    for (let run = 0; run < Number(process.argv[5] ?? 1); run++) outcomes.push((await syncInstall(installRowId, { perPage: Number(countArg) })).outcome);
    console.log(JSON.stringify({ outcomes }));
    break;
  }
  case "sync-many": {
    const ids = installRowId.split(",");
    const started = performance.now();
    const runs = await Promise.all(
      ids.map(async (id) => {
        const summary = await syncInstall(id, { perPage: Number(countArg) });
        return { summary, ms: performance.now() - started };
      }),
    );
    console.log(
      JSON.stringify({
        summaries: runs.map((run) => run.summary),
        // How long each install's sync took, from the common start (they run at once).
        installMs: runs.map((run) => run.ms),
        counters: Object.fromEntries(ids.map((id) => [id, apiCounters(id)])),
        wallMs: performance.now() - started,
      }),
    );
    break;
  }
  case "purge":
    console.log(JSON.stringify(await purgeRevokedInstallData()));
    break;
  case "deliver-alerts":
    // Here the second argument is the batch limit, not an install.
    console.log(JSON.stringify(await deliverQueuedAlerts({ maxJobs: Number(installRowId || 100), timeLimitMs: 30_000 })));
    await stopJobEngine(1_000);
    break;
  default:
    console.error(`unknown command ${command}`);
    process.exit(2);
}
process.exit(0);
