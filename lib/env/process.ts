// Time limits of the process: outbound calls and the shutdown.
//
// One concern's part of the configuration schema; lib/env.ts merges every part into the one schema
// validated at start-up, so each variable is still checked, and reported, in one place.
import "server-only";
import { z } from "zod";

export const processShape = {
  /** Upper bound for every outbound call to the service. */
  HTTP_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  /**
   * After SIGTERM, in-flight requests and the job under way get this long to finish; then the process
   * logs what it gives up and exits 1 (lib/shutdown.ts). 25 s: the longest in-flight work here is a
   * page that refreshes a token and then calls the API, two outbound calls of HTTP_TIMEOUT_MS (10 s
   * each), plus a margin; and it ends before Kubernetes' default 30 s grace period sends SIGKILL. The
   * platform's grace period must be longer (Docker's and Compose's default is 10 s: compose.yaml
   * raises it; docs/deploying.md).
   */
  SHUTDOWN_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(600).default(25),
};
