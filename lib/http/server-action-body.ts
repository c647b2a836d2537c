// What a server action's request may carry before Next.js decodes it (issue 34). A server action is
// a public endpoint: anyone can POST to a page with a `Next-Action` header (a "fetch action", what
// React sends once the page has hydrated) or a multipart form naming `$ACTION_REF_<n>` (a form
// submitted before hydration). Next.js decodes the body with React's reply decoder (its "Flight
// reply" format) before the action runs, and answers every decoding failure with a 500 and a stack
// trace in the log: a body that is not JSON, an argument list that is not a list, a reference to a
// part the body does not hold ("Connection closed"), a broken multipart body. proxy.ts asks this
// module first and answers 400.
//
// Written by hand because neither React nor Next.js exports a check: React's decoder only runs in the
// React server environment, where it is Next.js that calls it. The rule is narrower than the format,
// on purpose: it lets through what React's `encodeReply` writes for plain values, FormData, Date,
// BigInt, Map, Set, promises and outlined objects, each reference pointing at a part the body holds,
// and refuses the rest (server references passed as arguments, temporary references, Blobs, typed
// arrays, streams), which no page of this app sends. A fork whose client passes one of those to an
// action adds its tag to `INLINE_TAGS` or `CHUNK_TAGS`.
//
// Not server-only: pure functions, unit-tested on their own (tests/unit/server-action-body.test.ts).

/** Next.js's default `serverActions.bodySizeLimit` (this app sets none): a larger body is refused with 413. */
export const SERVER_ACTION_BODY_LIMIT = 1024 * 1024;

/** React refuses longer argument lists (Next.js: SERVER_ACTION_ARGS_LIMIT), with a 500. */
const MAX_ARGUMENTS = 1000;
const MAX_DEPTH = 64;

/** `$`-tags that stand for a value by themselves: `$$` (an escaped `$`), undefined, ±Infinity, -0, NaN, a Date, a FormData's prefix. */
const INLINE_TAGS = /^\$(?:\$.*|undefined|Infinity|-Infinity|-0|NaN|D.*|n-?\d{1,300}|K[0-9a-f]{1,8})$/s;
/** `$`-tags that name another part of the body: a promise (@), a Map (Q), a Set (W), an iterator (i), an outlined value (no letter). */
const CHUNK_TAGS = /^\$([@QWi]?)([0-9a-f]{1,8})((?::[^:]*)*)$/s;

type Parts = { get(name: string): FormDataEntryValue | null };

/**
 * Why this server-action request's body would fail to decode, or null when it would not.
 * `body`: the text of a non-multipart body, or the parsed form of a multipart one; `fetchAction`:
 * the request has a `Next-Action` header.
 */
export function serverActionBodyFault(body: string | Parts, fetchAction: boolean): string | null {
  if (typeof body === "string") {
    // A fetch action with a text body: the body is part 0 (the argument list), and there is no other.
    return fetchAction ? replyFault({ get: (name) => (name === "0" ? body : null) }, "", { list: true }) : null;
  }
  if (fetchAction) return replyFault(body, "", { list: true });
  // A form posted before hydration: `$ACTION_REF_<n>` names a reply under the prefix `$ACTION_<n>:`
  // whose part 0 is `{ id, bound }`, `bound` the bound arguments (a list) or null. `$ACTION_ID_<id>`
  // carries nothing to decode (Next.js checks the id itself).
  for (const key of formKeys(body)) {
    if (!key.startsWith("$ACTION_REF_")) continue;
    const prefix = `$ACTION_${key.slice("$ACTION_REF_".length)}:`;
    const fault = replyFault(body, prefix, { boundAction: true });
    if (fault) return `${key}: ${fault}`;
  }
  return null;
}

function formKeys(body: Parts): string[] {
  return "keys" in body && typeof body.keys === "function" ? [...(body as FormData).keys()] : [];
}

/** Checks part 0 of the reply under `prefix` and every part it reaches. */
function replyFault(parts: Parts, prefix: string, root: { list?: true; boundAction?: true }): string | null {
  const seen = new Map<number, unknown>();
  const problems: string[] = [];

  const part = (id: number, depth: number): { ok: true; value: unknown } | { ok: false } => {
    if (seen.has(id)) return { ok: true, value: seen.get(id) };
    const raw = parts.get(`${prefix}${id}`);
    if (typeof raw !== "string") {
      problems.push(raw === null ? `part ${id} is missing` : `part ${id} is a file`);
      return { ok: false };
    }
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      problems.push(`part ${id} is not JSON`);
      return { ok: false };
    }
    seen.set(id, value);
    visit(value, depth + 1);
    return { ok: true, value };
  };

  const visit = (value: unknown, depth = 0): void => {
    if (problems.length) return;
    // Deeper than any form's arguments, and a stack overflow here would be the 500 this module prevents.
    if (depth > MAX_DEPTH) problems.push("nested too deep");
    else if (Array.isArray(value)) {
      for (const item of value) visit(item, depth + 1);
    } else if (value !== null && typeof value === "object") {
      for (const item of Object.values(value)) visit(item, depth + 1);
    } else if (typeof value === "string" && value.startsWith("$")) {
      reference(value, depth);
    }
  };

  const reference = (text: string, depth: number): void => {
    if (INLINE_TAGS.test(text)) return;
    const match = CHUNK_TAGS.exec(text);
    if (!match) {
      problems.push(`unsupported reference ${JSON.stringify(text.slice(0, 12))}`);
      return;
    }
    const [, tag, hex, path] = match;
    const target = part(parseInt(hex!, 16), depth + 1);
    if (!target.ok) return;
    let value = target.value;
    for (const key of path!.split(":").slice(1)) {
      if (value === null || typeof value !== "object" || !Object.hasOwn(value, key)) {
        problems.push(`reference ${JSON.stringify(text.slice(0, 24))} leads nowhere`);
        return;
      }
      value = (value as Record<string, unknown>)[key];
    }
    // A Map is built from [key, value] pairs, a Set and an iterator from a list.
    if (tag === "Q" && !(Array.isArray(value) && value.every(Array.isArray))) problems.push("a Map that is not a list of pairs");
    if ((tag === "W" || tag === "i") && !Array.isArray(value)) problems.push("a Set or iterator that is not a list");
  };

  const top = part(0, 0);
  if (!top.ok) return problems[0]!;
  if (problems.length) return problems[0]!;
  if (root.list && !Array.isArray(top.value)) return "the argument list is not a list";
  if (root.list && (top.value as unknown[]).length > MAX_ARGUMENTS) return "too many arguments";
  if (root.boundAction) {
    const meta = top.value as { id?: unknown; bound?: unknown } | null;
    if (meta === null || typeof meta !== "object" || typeof meta.id !== "string") return "the bound action has no id";
    if (meta.bound !== null && typeof meta.bound !== "string") return "the bound arguments are not a reference";
    if (typeof meta.bound === "string") {
      const match = /^\$@([0-9a-f]{1,8})$/.exec(meta.bound);
      if (!match) return "the bound arguments are not a promise";
      const bound = seen.get(parseInt(match[1]!, 16));
      if (!Array.isArray(bound)) return "the bound arguments are not a list";
    }
  }
  return null;
}

/**
 * The FormData a form's server action was given, or an empty one when it was given something else
 * (a stranger's hand-made request can pass any value): the action's own checks then refuse the
 * missing fields as they refuse any bad input, instead of failing on `.get` with a 500.
 */
export function formOf(value: unknown): FormData {
  return value instanceof FormData ? value : new FormData();
}
