// Every operator the sandbox knows, and what the API shows of each at the current clock:
// - the seeded ones (the three of the README and SANDBOX_OPERATORS' extras), built at start as before;
// - the large one, "Nordic Mega Charging" (decision 40), built on first use, so a start that never touches it does not
//   pay for its 20,000 charges;
// - the ones created through POST /_sandbox/bulk-installs (decision 41): the state keeps only their numbers; their
//   records are derived from the seed when first asked for, and kept in a bounded cache;
// then, on top of an operator's records, the data that moved with the clock (live.ts, decision 43) and the records a
// test deleted or changed through the control API (decision 44).
import type { SandboxClock } from "./clock.js";
import type { SandboxConfig } from "./config.js";
import { slotsElapsed, withLiveData, type LiveSetting } from "./live.js";
import {
  BULK_CHARGE_POINTS,
  BULK_OPERATOR_ID_BASE,
  LARGE_OPERATOR,
  LARGE_OPERATOR_COUNTS,
  LARGE_OPERATOR_CURRENCY,
  LARGE_OPERATOR_ID,
  buildBulkOperator,
  buildLargeOperator,
  buildSeed,
  bulkOperator,
  bulkOperatorCurrency,
  type Operator,
  type OperatorData,
} from "./seed.js";
import type { OperatorEdits, RecordEdit, SandboxState } from "./store.js";

/** Bulk operators' records kept built at once (each is small; the cache only bounds memory at 100,000 operators). */
const BULK_CACHE_SIZE = 5000;
/** Current views kept (one per operator in use). */
const VIEW_CACHE_SIZE = 5000;

export type RecordKind = "chargePoints" | "charges" | "teams";

/** The live setting as configured, for a state that has none of its own yet. */
export interface LiveDefaults {
  enabled: boolean;
  chargesPerHour: number;
}

export class OperatorDirectory {
  private readonly seeded: Map<number, OperatorData>;
  private large: OperatorData | null = null;
  private readonly bulk = new Map<number, OperatorData>();
  private readonly views = new Map<number, { key: string; view: OperatorData }>();
  /** Bumped by every record edit and reset, so cached views are rebuilt. */
  private editVersion = 0;

  constructor(
    config: Pick<SandboxConfig, "operatorCount" | "chargesPerOperator">,
    private readonly state: () => SandboxState,
    private readonly clock: SandboxClock,
    readonly liveDefaults: LiveDefaults,
  ) {
    this.seeded = new Map(buildSeed(undefined, config.operatorCount, config.chargesPerOperator).operators.map((o) => [o.operator.id, o]));
  }

  /** Name, slug and currency without building any records (install creation, lists). */
  describe(operatorId: number): { operator: Operator; currency: string } | undefined {
    const seeded = this.seeded.get(operatorId);
    if (seeded) return { operator: seeded.operator, currency: seeded.profile.currency.identifier };
    if (operatorId === LARGE_OPERATOR_ID) return { operator: LARGE_OPERATOR, currency: LARGE_OPERATOR_CURRENCY };
    const n = this.bulkNumber(operatorId);
    return n === null ? undefined : { operator: bulkOperator(n), currency: bulkOperatorCurrency(n) };
  }

  /** Seeded operators (the portal's list), then the large one, then the bulk ones. */
  listOperators(options: { bulk: boolean } = { bulk: true }): Operator[] {
    const list = [...this.seeded.values()].map((o) => o.operator);
    list.push(LARGE_OPERATOR);
    if (options.bulk) for (let n = 1; n <= this.state().bulkOperators.count; n += 1) list.push(bulkOperator(n));
    return list;
  }

  get bulkCount(): number {
    return this.state().bulkOperators.count;
  }

  /** The live setting in force: the state's own once a test or reset set it, else the configured one since the clock's start. */
  liveSetting(): LiveSetting {
    const live = this.state().live;
    return live ? { enabled: live.enabled, chargesPerHour: live.chargesPerHour, anchorMs: live.anchorMs } : { enabled: false, chargesPerHour: this.liveDefaults.chargesPerHour, anchorMs: 0 };
  }

  /** The operator's records as the API shows them now: seeded + live data at the current clock, minus deletions, plus edits. */
  find(operatorId: number): OperatorData | undefined {
    const base = this.base(operatorId);
    if (!base) return undefined;
    const setting = this.liveSetting();
    const slots = slotsElapsed(setting, this.clock.nowMs());
    const edits = this.state().recordEdits[String(operatorId)];
    if (slots === 0 && !edits) return base;
    const key = `${this.editVersion}|${setting.enabled}|${setting.chargesPerHour}|${setting.anchorMs}|${slots}`;
    const cached = this.views.get(operatorId);
    if (cached?.key === key) return cached.view;
    const live = withLiveData(base, setting, slots);
    const view: OperatorData = {
      ...base,
      teams: applyEdits(base.teams, edits?.teams),
      chargePoints: applyEdits(live.chargePoints, edits?.chargePoints),
      charges: applyEdits(live.charges, edits?.charges),
    };
    remember(this.views, operatorId, { key, view }, VIEW_CACHE_SIZE);
    return view;
  }

  /**
   * How many records the API lists for the operator now. Without live data or edits the counts are known without
   * building anything (GET /_sandbox/operators with 10,000 bulk operators stays quick, and the large one stays unbuilt).
   */
  counts(operatorId: number): { chargePoints: number; charges: number; teams: number } | undefined {
    const plain = slotsElapsed(this.liveSetting(), this.clock.nowMs()) === 0 && !this.state().recordEdits[String(operatorId)];
    const n = this.bulkNumber(operatorId);
    if (plain && n !== null) return { chargePoints: BULK_CHARGE_POINTS, charges: this.bulkChargeCount(n), teams: 1 };
    if (plain && operatorId === LARGE_OPERATOR_ID && !this.large) return LARGE_OPERATOR_COUNTS;
    const data = this.find(operatorId);
    return data && { chargePoints: data.chargePoints.length, charges: data.charges.length, teams: data.teams.length };
  }

  /** Whether the large operator's records were built yet (they are built on first use). */
  get largeBuilt(): boolean {
    return this.large !== null;
  }

  /** Call after a record edit or a reset: views are rebuilt on next use. */
  invalidate(): void {
    this.editVersion += 1;
    this.views.clear();
  }

  /** The operator's records before live data and edits (the seed's). */
  private base(operatorId: number): OperatorData | undefined {
    const seeded = this.seeded.get(operatorId);
    if (seeded) return seeded;
    if (operatorId === LARGE_OPERATOR_ID) {
      this.large ??= buildLargeOperator();
      return this.large;
    }
    const n = this.bulkNumber(operatorId);
    if (n === null) return undefined;
    const cached = this.bulk.get(operatorId);
    if (cached) return cached;
    const built = buildBulkOperator(n, this.bulkChargeCount(n));
    remember(this.bulk, operatorId, built, BULK_CACHE_SIZE);
    return built;
  }

  private bulkNumber(operatorId: number): number | null {
    const n = operatorId - BULK_OPERATOR_ID_BASE;
    return Number.isInteger(n) && n >= 1 && n <= this.state().bulkOperators.count ? n : null;
  }

  private bulkChargeCount(n: number): number {
    const batch = this.state().bulkOperators.batches.find((b) => n >= b.first && n < b.first + b.count);
    return batch?.charges ?? 0;
  }
}

/** Drops deleted records and applies changed fields (decision 44); records keep their order. */
function applyEdits<T extends { id: number }>(records: T[], edits: OperatorEdits[RecordKind] | undefined): T[] {
  if (!edits || Object.keys(edits).length === 0) return records;
  const out: T[] = [];
  for (const record of records) {
    const edit: RecordEdit | undefined = edits[String(record.id)];
    if (!edit) out.push(record);
    else if (edit.deletedAt === null) out.push({ ...record, ...edit.patch, ...("updatedAt" in record && edit.updatedAt ? { updatedAt: edit.updatedAt } : {}) });
  }
  return out;
}

/** A small LRU: Map keeps insertion order, so re-inserting moves a key to the end and the first key is the oldest. */
function remember<K, V>(cache: Map<K, V>, key: K, value: V, max: number): void {
  cache.delete(key);
  cache.set(key, value);
  if (cache.size > max) cache.delete(cache.keys().next().value as K);
}
