// Which records of the sandbox state changed since the last save, so that a save writes those records and nothing
// else (store.ts's journal, README decision 42).
//
// The sandbox's modules change records in place (`install.status = "revoked"`, `stats.refreshesIssued += 1`,
// `state.tokens[hash] = {...}`), dozens of places that never said *what* they changed: the old store rewrote the whole
// state after any change. Rather than make every one of them name its record (and have the journal silently miss the
// one that forgets), the store hands out the state through Proxies that note the record a write lands in: a write
// anywhere inside `state.tokens[hash]` marks `tokens/hash`. Hand-written rather than a library (on-change,
// valtio...): those report a `push` as a change of the whole array, and the journal must name the element.
//
// Reads cost a WeakMap lookup per object reached; the hot paths (token lookup, install lookup) reach a handful.

/** Keyed collections (`Record<string, X>`): a change is a put or a delete of one key. */
export const KEYED_COLLECTIONS = ["tokens", "codes", "authTickets", "consentRequests", "chains", "tokenStats", "deletedTokenInstalls", "recordEdits"] as const;
/** Arrays whose elements are only ever appended and changed in place: a change is a put at an index. */
export const LIST_COLLECTIONS = ["installs", "consumers"] as const;
/** Append-only, trimmed logs: the store appends to them itself (addEvent, addDelivery), so they are not tracked. */
export const LOGS = ["events", "deliveries"] as const;

export type CollectionName = (typeof KEYED_COLLECTIONS)[number] | (typeof LIST_COLLECTIONS)[number];

export interface ChangeSink {
  /** A root field (a number, or an object written as a whole such as `app`) changed. */
  field(name: string): void;
  /** One record of a collection was written or deleted (its current value, or absence, is what gets saved). */
  record(collection: CollectionName, key: string, value: unknown, previous: unknown): void;
  /** A whole collection was replaced: only a full snapshot can save that. */
  everything(): void;
}

const isObject = (value: unknown): value is object => typeof value === "object" && value !== null;
const KEYED = new Set<string>(KEYED_COLLECTIONS);
const LISTS = new Set<string>(LIST_COLLECTIONS);
const UNTRACKED = new Set<string>(LOGS);

/** Wraps `root` so that every write reports which record it touched to `sink`. */
export function trackChanges<T extends object>(root: T, sink: ChangeSink): T {
  const nested = new WeakMap<object, object>();
  const collections = new Map<string, { target: object; proxy: object }>();

  // Any object inside a record: a write anywhere in it is a write of that record.
  function inside(target: object, mark: () => void): object {
    let proxy = nested.get(target);
    if (!proxy) {
      proxy = new Proxy(target, {
        get(t, prop, receiver) {
          const value = Reflect.get(t, prop, receiver) as unknown;
          return isObject(value) && typeof value !== "function" ? inside(value, mark) : value;
        },
        set(t, prop, value) {
          Reflect.set(t, prop, value);
          mark();
          return true;
        },
        deleteProperty(t, prop) {
          Reflect.deleteProperty(t, prop);
          mark();
          return true;
        },
      });
      nested.set(target, proxy);
    }
    return proxy;
  }

  function collection(name: CollectionName, target: object): object {
    const cached = collections.get(name);
    if (cached && cached.target === target) return cached.proxy;
    const isList = LISTS.has(name);
    const proxy = new Proxy(target, {
      get(t, prop, receiver) {
        const value = Reflect.get(t, prop, receiver) as unknown;
        if (typeof prop === "symbol" || !isObject(value) || typeof value === "function") return value;
        const key = prop;
        return inside(value, () => sink.record(name, key, Reflect.get(t, key), undefined));
      },
      set(t, prop, value) {
        const previous = Reflect.get(t, prop) as unknown;
        Reflect.set(t, prop, value);
        if (typeof prop === "string" && !(isList && prop === "length")) sink.record(name, prop, value, previous);
        return true;
      },
      deleteProperty(t, prop) {
        const previous = Reflect.get(t, prop) as unknown;
        Reflect.deleteProperty(t, prop);
        if (typeof prop === "string") sink.record(name, prop, undefined, previous);
        return true;
      },
    });
    collections.set(name, { target, proxy });
    return proxy;
  }

  return new Proxy(root, {
    get(t, prop, receiver) {
      const value = Reflect.get(t, prop, receiver) as unknown;
      if (typeof prop === "symbol" || !isObject(value) || UNTRACKED.has(prop)) return value;
      if (KEYED.has(prop) || LISTS.has(prop)) return collection(prop as CollectionName, value);
      const name = prop;
      return inside(value, () => sink.field(name));
    },
    set(t, prop, value) {
      Reflect.set(t, prop, value);
      if (typeof prop !== "string") return true;
      if (KEYED.has(prop) || LISTS.has(prop) || UNTRACKED.has(prop)) sink.everything();
      else sink.field(prop);
      return true;
    },
  });
}
