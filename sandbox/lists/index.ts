// The registry of the sandbox's extra read-only lists: operations a fork's app reads that the
// sandbox does not serve out of the box. Each is a file in this folder (one per list: its path, its
// scope and the records it serves for an operator) and a line below; `npm run new:resource` writes
// both for the app's side and the sandbox's. The API routes (../api/routes.ts) serve each one paged
// like every list (public-facts.md "Lists and pagination"), behind its scope (contract §2, the same
// rules as charge points and charges), and the identity provider knows its scopes (../scopes.ts).
//
// These are a fork's guesses at operations the contract does not show (§4.2: "not shown"): record
// each one in the fork's own section of docs/spec-gaps.md (docs/updating.md, "The spec-gap register").
import type { ExtraList } from "./list.js";

export const EXTRA_LISTS: readonly ExtraList[] = [];
