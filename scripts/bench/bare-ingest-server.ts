// The bench's floor for webhook ingest (npm run bench -- ingest): a bare node:http + pg server that
// does the durable work the app does for a first install.created, in one statement, and nothing
// else: no framework, no logging, no zod. It runs as its own process, like `next start`, so the
// load generator (the bench process) does not share its CPU time with it.
//
//   node --import tsx scripts/bench/bare-ingest-server.ts
//   env: DATABASE_URL, WEBHOOK_SECRET, OAUTH_CLIENT_ID, BARE_PORT, BARE_POOL_SIZE (default 4)
//
// It imports nothing from lib/ on purpose: it is the yardstick, not the thing measured.
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";

const { DATABASE_URL, WEBHOOK_SECRET, OAUTH_CLIENT_ID } = process.env;
if (!DATABASE_URL || !WEBHOOK_SECRET || !OAUTH_CLIENT_ID) throw new Error("bare-ingest-server: DATABASE_URL, WEBHOOK_SECRET and OAUTH_CLIENT_ID are required");
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: Number(process.env.BARE_POOL_SIZE ?? 4) });

// The same rows as the app's one-statement path (lib/webhooks/handlers/install-created.ts): the
// delivery (deduplicated), the install and its first event, under the operator's advisory lock.
const RECORD = `
WITH serialized AS (
    SELECT pg_advisory_xact_lock(hashtext('install:' || $3 || ':' || $4))
), fresh AS (
    SELECT FROM serialized
    WHERE NOT EXISTS (SELECT FROM installs WHERE install_id = $2)
      AND NOT EXISTS (SELECT FROM installs WHERE client_id = $3 AND operator_id = $4 AND status IN ('ACTIVE', 'NEEDS_REAUTH', 'REINSTALL_NEEDED'))
), delivery AS (
    INSERT INTO webhook_deliveries (id, dedupe_key, event_type, install_id, delivered_at, outcome, detail, payload)
    SELECT gen_random_uuid(), $1, 'install.created', $2, to_timestamp($5), 'processed', 'install recorded', $6::jsonb FROM fresh
    ON CONFLICT (dedupe_key) DO NOTHING
    RETURNING id
), install AS (
    INSERT INTO installs (id, install_id, client_id, operator_id, slug, granted_scopes, status, updated_at)
    SELECT gen_random_uuid(), $2, $3, $4, $7, '{}', 'ACTIVE', now() FROM delivery
    RETURNING id
)
INSERT INTO install_events (id, install_row_id, to_status, cause, detail)
SELECT gen_random_uuid(), id, 'ACTIVE', 'webhook', 'install recorded' FROM install`;

function verified(body: Buffer, header: string | undefined): boolean {
  const expected = Buffer.from(`sha256=${createHmac("sha256", WEBHOOK_SECRET!).update(body).digest("hex")}`);
  const given = Buffer.from(header ?? "");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const answer = (status: number, outcome: string) => res.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify({ status: outcome }));
    const body = Buffer.concat(chunks);
    if (!verified(body, req.headers["x-volt-signature"] as string | undefined)) return answer(401, "invalid_signature");
    let delivery: { id: string; delivered_at: number; data: { install_id: number; operator_id: number | string; slug?: string } };
    try {
      delivery = JSON.parse(body.toString("utf8")) as typeof delivery;
    } catch {
      return answer(400, "invalid_json");
    }
    const { install_id, operator_id, slug } = delivery.data;
    pool
      .query(RECORD, [`id:${delivery.id}`, install_id, OAUTH_CLIENT_ID, String(operator_id), delivery.delivered_at, body.toString("utf8"), slug ?? null])
      .then(() => answer(200, "processed"))
      .catch(() => answer(503, "unavailable"));
  });
});

server.listen(Number(process.env.BARE_PORT ?? 0), "localhost", () => console.log(`listening on ${(server.address() as AddressInfo).port}`));
