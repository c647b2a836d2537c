// Sending many requests at once, the way a burst of webhook deliveries arrives: one connection per
// request, all opened together. node:http rather than fetch: fetch gives up on a connection after
// 10 s, while a burst's later connections wait their turn in the server's accept queue (and the
// kernel's SYN retries); the test measures what the app answers, not how long the client waits.
import { request } from "node:http";
import { cpus, loadavg } from "node:os";

export type BurstRequest = { url: string; body: string; headers: Record<string, string> };

/**
 * POSTs every request at once and resolves, once every one has ended, with each HTTP status, or
 * for a request that got no answer its error code (e.g. "ECONNRESET"), so a failure says why.
 */
export async function postAtOnce(requests: BurstRequest[]): Promise<(number | string)[]> {
  return (await postAtOnceTimed(requests)).map((answer) => answer.status);
}

/** As postAtOnce, with each answer's time by the client's clock, from sending to the answer's end. */
export async function postAtOnceTimed(requests: BurstRequest[]): Promise<{ status: number | string; ms: number }[]> {
  const started = performance.now();
  const settled = await Promise.allSettled(
    requests.map(
      ({ url, body, headers }) =>
        new Promise<{ status: number; ms: number }>((resolve, reject) => {
          const req = request(url, { method: "POST", agent: false, headers: { "Content-Type": "application/json", ...headers } }, (res) => {
            res.resume();
            res.on("end", () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
            res.on("error", reject);
          });
          req.on("error", reject);
          req.end(body);
        }),
    ),
  );
  // Every request has ended (answered or failed) before a test looks at the database, so no
  // straggler from this burst can land in the next test's world.
  return settled.map((outcome) =>
    outcome.status === "fulfilled"
      ? outcome.value
      : { status: String((outcome.reason as NodeJS.ErrnoException).code ?? (outcome.reason as Error).message), ms: performance.now() - started },
  );
}

/**
 * The machine's load, for a failure message: a 503 from the app's record deadline (A201) is the app
 * refusing in time what it could not record in time, so a test that meets more of them than it
 * allows says how busy the machine was rather than failing as if the app were wrong.
 */
export function machineLoad(): string {
  return `load ${loadavg()[0]!.toFixed(1)} on ${cpus().length} CPUs`;
}
