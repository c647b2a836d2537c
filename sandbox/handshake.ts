// What each request of the install handshake was checked for, so that a learner can watch the flow happen
// (README decision 52; the console's page /console/handshake reads it back).
//
// A handshake starts when the portal builds an authorization request (Connect, Open, or POST /_sandbox/authorize-url)
// and gets an id, `hs_…`, carried in the portal ticket, the consent request and the code's chain. Every event of the
// handshake's requests names it (`handshake`), and lists what the code checked, in the order it checked it (`checks`),
// what the request did (`results`) and what the caller got back (`answer`). The id is a label, not a credential:
// nothing can be done with it. Checks and results name what was compared, never a value a caller could reuse
// (no token, code, secret, ticket, consent challenge or state).
import { randomString } from "./crypto.js";

export const HANDSHAKE_ID_PATTERN = /^hs_[A-Za-z0-9_-]{1,32}$/;

export function newHandshakeId(): string {
  return `hs_${randomString(9)}`;
}

const PASS = "pass: ";
const FAIL = "fail: ";

/**
 * The checks one request made, in order. Stored as plain strings ("pass: …" / "fail: …") because an event's
 * values are strings, numbers, booleans, null or string lists (store.ts `EventValue`).
 */
export class Checks {
  private readonly entries: string[] = [];

  /** Records the check and returns whether it passed, so a caller writes `if (!checks.verify(ok, "…")) throw …`. */
  verify(passed: boolean, check: string): boolean {
    this.entries.push(`${passed ? PASS : FAIL}${check}`);
    return passed;
  }

  pass(check: string): void {
    this.verify(true, check);
  }

  fail(check: string): void {
    this.verify(false, check);
  }

  list(): string[] {
    return [...this.entries];
  }
}

export interface ParsedCheck {
  passed: boolean;
  text: string;
}

/** Reads one entry back; anything else (an older event, a hand-written one) counts as a passed note. */
export function parseCheck(entry: string): ParsedCheck {
  if (entry.startsWith(FAIL)) return { passed: false, text: entry.slice(FAIL.length) };
  if (entry.startsWith(PASS)) return { passed: true, text: entry.slice(PASS.length) };
  return { passed: true, text: entry };
}
