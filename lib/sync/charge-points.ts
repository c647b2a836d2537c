// Charge points (GET /charge-points; charge-points:read). Hundreds per operator at most, so every
// pass is a full one. `siteIds` in the install's configuration keeps only those sites' charge points.
import "server-only";
import { keepsSite } from "./config";
import { bool, defineSyncResource, num, objectAt, recordId, text, type SyncedRow } from "./resource";

type ChargePointRow = SyncedRow & {
  name: string | null;
  state: string | null;
  type: string | null;
  site_id: string | null;
  team_id: string | null;
  serial_number: string | null;
  evse_id: string | null;
  max_kw: number | null;
  is_active: boolean | null;
  address_label: string | null;
  city: string | null;
  country: string | null;
  latitude: number | null;
  longitude: number | null;
  connectors: unknown[] | null;
};

export const chargePoints = defineSyncResource<ChargePointRow, "charge_points">({
  name: "charge_points",
  label: "charge points",
  table: "synced_charge_points",
  path: "/charge-points",
  scopeResource: "charge-points",
  scopeWords: { "charge-points:read": "Read your charge points" },
  incremental: false,
  toRow(record) {
    const external_id = recordId(record);
    if (external_id === null) return null;
    // public-facts.md "Records": location { coordinates {latitude, longitude}, addressLabel, address {...} }.
    const location = objectAt(record, "location");
    const address = objectAt(location, "address");
    const coordinates = objectAt(location, "coordinates");
    return {
      external_id,
      name: text(record.name),
      state: text(record.state),
      type: text(record.type),
      site_id: text(record.siteId),
      team_id: text(record.teamId),
      serial_number: text(record.serialNumber),
      evse_id: text(record.evseId),
      max_kw: num(record.maxKw),
      is_active: bool(record.isActive),
      address_label: text(location?.addressLabel),
      city: text(address?.city),
      country: text(address?.country),
      latitude: num(coordinates?.latitude),
      longitude: num(coordinates?.longitude),
      connectors: Array.isArray(record.connectors) ? record.connectors : null,
      raw: record,
    };
  },
  keeps: (row, config) => keepsSite(config, row.site_id),
  disabledBy: () => false,
  async upsert(tx, rows, { installRowId, passId, page, now }) {
    return tx.$executeRaw`
      INSERT INTO synced_charge_points AS t (install_row_id, external_id, name, state, type, site_id, team_id, serial_number, evse_id, max_kw,
        is_active, address_label, city, country, latitude, longitude, connectors, raw, seen_pass_id, seen_page, first_seen_at, last_seen_at, updated_at, deleted_at)
      SELECT ${installRowId}::uuid, r.external_id, r.name, r.state, r.type, r.site_id, r.team_id, r.serial_number, r.evse_id, r.max_kw,
        r.is_active, r.address_label, r.city, r.country, r.latitude, r.longitude, r.connectors, r.raw, ${passId}::uuid, ${page}, ${now}, ${now}, ${now}, NULL
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS r(external_id text, name text, state text, type text, site_id text, team_id text,
        serial_number text, evse_id text, max_kw numeric, is_active boolean, address_label text, city text, country text,
        latitude double precision, longitude double precision, connectors jsonb, raw jsonb)
      ON CONFLICT (install_row_id, external_id) DO UPDATE SET
        name = EXCLUDED.name, state = EXCLUDED.state, type = EXCLUDED.type, site_id = EXCLUDED.site_id, team_id = EXCLUDED.team_id,
        serial_number = EXCLUDED.serial_number, evse_id = EXCLUDED.evse_id, max_kw = EXCLUDED.max_kw, is_active = EXCLUDED.is_active,
        address_label = EXCLUDED.address_label, city = EXCLUDED.city, country = EXCLUDED.country, latitude = EXCLUDED.latitude,
        longitude = EXCLUDED.longitude, connectors = EXCLUDED.connectors, raw = EXCLUDED.raw,
        seen_pass_id = EXCLUDED.seen_pass_id, seen_page = EXCLUDED.seen_page, last_seen_at = EXCLUDED.last_seen_at,
        updated_at = CASE WHEN t.raw IS DISTINCT FROM EXCLUDED.raw OR t.deleted_at IS NOT NULL THEN EXCLUDED.updated_at ELSE t.updated_at END,
        deleted_at = NULL`;
  },
  async pruneOutOfScope(tx, installRowId, config) {
    if (config.siteIds.size === 0) return 0;
    return tx.$executeRaw`
      DELETE FROM synced_charge_points
      WHERE install_row_id = ${installRowId}::uuid AND (site_id IS NULL OR NOT (site_id = ANY(${[...config.siteIds]}::text[])))`;
  },
});
