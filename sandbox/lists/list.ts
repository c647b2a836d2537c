// What an extra read-only list is (./index.ts): everything the sandbox needs to serve it.
import type { OperatorData } from "../seed.js";

export interface ExtraList {
  /** The operation's path under /api/v1, e.g. "/tariffs". */
  path: `/${string}`;
  /** The scope's resource name (contract §2): `<resource>` or `<resource>:read` grants the list. */
  scopeResource: string;
  /** What the consent page says the read scope allows. */
  description: string;
  /**
   * The operator's records, in the order the list serves them (by id, as every list here). Built
   * from the operator's seed data alone, so the same on every start and reset, like the seed.
   */
  records(operator: OperatorData): Record<string, unknown>[];
}

const built = new WeakMap<ExtraList, WeakMap<OperatorData, Record<string, unknown>[]>>();

/**
 * The list's records for the operator, built on the first request that lists them and kept with the
 * operator's data as the API shows it now (../operators.ts `find`): a record edit, a reset or live
 * data's next hour makes a new one, and the next request builds them again from it.
 */
export function listRecords(list: ExtraList, operator: OperatorData): Record<string, unknown>[] {
  let perOperator = built.get(list);
  if (!perOperator) built.set(list, (perOperator = new WeakMap()));
  let records = perOperator.get(operator);
  if (!records) perOperator.set(operator, (records = list.records(operator)));
  return records;
}
