// Charges (GET /charges; charge-transactions:read, public-facts.md). The long list: thousands per
// operator, growing every day, so passes between full ones are incremental (lib/sync/strategy.ts).
// `syncCharges: false` in the install's configuration turns it off (and removes what was synced);
// `siteIds` keeps only those sites' charges.
import "server-only";
import { keepsSite } from "./config";
import { defineSyncResource, num, objectAt, recordId, text, timestamp, type SyncedRow } from "./resource";

type ChargeRow = SyncedRow & {
  charge_point_id: string | null;
  site_id: string | null;
  state: string | null;
  type: string | null;
  consumed_kwh: number | null;
  started_at: string | null;
  stopped_at: string | null;
  price: number | null;
  cost: number | null;
  currency: string | null;
  currency_decimals: number | null;
};

export const charges = defineSyncResource<ChargeRow, "charges">({
  name: "charges",
  label: "charges",
  table: "synced_charges",
  path: "/charges",
  scopeResource: "charge-transactions",
  scopeWords: { "charge-transactions:read": "Read your charging sessions" },
  incremental: true,
  toRow(record) {
    const external_id = recordId(record);
    if (external_id === null) return null;
    const currency = objectAt(record, "currency");
    const decimals = num(currency?.decimals);
    return {
      external_id,
      charge_point_id: text(record.chargePointId),
      site_id: text(record.siteId),
      state: text(record.state),
      type: text(record.type),
      consumed_kwh: num(record.consumedKwh),
      started_at: timestamp(record.startedAt),
      stopped_at: timestamp(record.stoppedAt),
      price: num(record.price),
      cost: num(record.cost),
      currency: text(currency?.identifier),
      currency_decimals: decimals !== null && Number.isInteger(decimals) ? decimals : null,
      raw: record,
    };
  },
  keeps: (row, config) => keepsSite(config, row.site_id),
  disabledBy: (config) => !config.syncCharges,
  async upsert(tx, rows, { installRowId, passId, page, now }) {
    return tx.$executeRaw`
      INSERT INTO synced_charges AS t (install_row_id, external_id, charge_point_id, site_id, state, type, consumed_kwh, started_at, stopped_at,
        price, cost, currency, currency_decimals, raw, seen_pass_id, seen_page, first_seen_at, last_seen_at, updated_at, deleted_at)
      SELECT ${installRowId}::uuid, r.external_id, r.charge_point_id, r.site_id, r.state, r.type, r.consumed_kwh, r.started_at, r.stopped_at,
        r.price, r.cost, r.currency, r.currency_decimals, r.raw, ${passId}::uuid, ${page}, ${now}, ${now}, ${now}, NULL
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS r(external_id text, charge_point_id text, site_id text, state text, type text,
        consumed_kwh numeric, started_at timestamptz, stopped_at timestamptz, price numeric, cost numeric, currency text, currency_decimals integer, raw jsonb)
      ON CONFLICT (install_row_id, external_id) DO UPDATE SET
        charge_point_id = EXCLUDED.charge_point_id, site_id = EXCLUDED.site_id, state = EXCLUDED.state, type = EXCLUDED.type,
        consumed_kwh = EXCLUDED.consumed_kwh, started_at = EXCLUDED.started_at, stopped_at = EXCLUDED.stopped_at, price = EXCLUDED.price,
        cost = EXCLUDED.cost, currency = EXCLUDED.currency, currency_decimals = EXCLUDED.currency_decimals, raw = EXCLUDED.raw,
        seen_pass_id = EXCLUDED.seen_pass_id, seen_page = EXCLUDED.seen_page, last_seen_at = EXCLUDED.last_seen_at,
        updated_at = CASE WHEN t.raw IS DISTINCT FROM EXCLUDED.raw OR t.deleted_at IS NOT NULL THEN EXCLUDED.updated_at ELSE t.updated_at END,
        deleted_at = NULL`;
  },
  async oldestOpen(tx, installRowId, since) {
    // "Open" = not stopped: stoppedAt is what every finished charge has (public-facts.md "Charge").
    // Its position counts the rows before it in the list's order (ids by value: length, then text);
    // rows the configuration filtered out are not here, which only places the record earlier.
    const [row] = await tx.$queryRaw<{ id: string; position: number }[]>`
      WITH open AS (
        SELECT external_id FROM synced_charges
        WHERE install_row_id = ${installRowId}::uuid AND deleted_at IS NULL AND stopped_at IS NULL AND started_at >= ${since}
        ORDER BY length(external_id), external_id
        LIMIT 1
      )
      SELECT o.external_id AS id,
        (SELECT count(*)::int FROM synced_charges c
         WHERE c.install_row_id = ${installRowId}::uuid AND c.deleted_at IS NULL
           AND (length(c.external_id), c.external_id) < (length(o.external_id), o.external_id)) AS position
      FROM open o`;
    return row ?? null;
  },
  async pruneOutOfScope(tx, installRowId, config) {
    if (!config.syncCharges) return tx.$executeRaw`DELETE FROM synced_charges WHERE install_row_id = ${installRowId}::uuid`;
    if (config.siteIds.size === 0) return 0;
    return tx.$executeRaw`
      DELETE FROM synced_charges
      WHERE install_row_id = ${installRowId}::uuid AND (site_id IS NULL OR NOT (site_id = ANY(${[...config.siteIds]}::text[])))`;
  },
});
