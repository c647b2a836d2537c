// Teams (GET /teams; a teams scope): a short list, so every pass is a full one.
import "server-only";
import { defineSyncResource, recordId, text, type SyncedRow } from "./resource";

type TeamRow = SyncedRow & { name: string | null; type: string | null };

export const teams = defineSyncResource<TeamRow, "teams">({
  name: "teams",
  label: "teams",
  table: "synced_teams",
  path: "/teams",
  scopeResource: "teams",
  scopeWords: {
    "teams:read": "Read your teams",
    // The Teams page's rename (lib/dashboard/teams.ts): requested only when the feature is on. The
    // words say what THIS app does with the scope (rename only), not all the scope would allow.
    "teams:write": "Rename your teams",
  },
  incremental: false,
  toRow(record) {
    const external_id = recordId(record);
    if (external_id === null) return null;
    return { external_id, name: text(record.name), type: text(record.type), raw: record };
  },
  keeps: () => true,
  disabledBy: () => false,
  async upsert(tx, rows, { installRowId, passId, page, now }) {
    // One statement for the whole page: the rows travel as one JSON parameter. A record that comes
    // back after being marked deleted is un-deleted; updated_at moves only when the record changed.
    return tx.$executeRaw`
      INSERT INTO synced_teams AS t (install_row_id, external_id, name, type, raw, seen_pass_id, seen_page, first_seen_at, last_seen_at, updated_at, deleted_at)
      SELECT ${installRowId}::uuid, r.external_id, r.name, r.type, r.raw, ${passId}::uuid, ${page}, ${now}, ${now}, ${now}, NULL
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS r(external_id text, name text, type text, raw jsonb)
      ON CONFLICT (install_row_id, external_id) DO UPDATE SET
        name = EXCLUDED.name, type = EXCLUDED.type, raw = EXCLUDED.raw,
        seen_pass_id = EXCLUDED.seen_pass_id, seen_page = EXCLUDED.seen_page, last_seen_at = EXCLUDED.last_seen_at,
        updated_at = CASE WHEN t.raw IS DISTINCT FROM EXCLUDED.raw OR t.deleted_at IS NOT NULL THEN EXCLUDED.updated_at ELSE t.updated_at END,
        deleted_at = NULL`;
  },
  pruneOutOfScope: async () => 0,
});
