// The names `npm run new:resource -- <name>` derives from the one name it is given: one function, so
// the generator, its check and its tests agree on every file and identifier.

export type ResourceNames = {
  /** As given, kebab-case and plural: the API path (/tariffs), the scope's resource, the page's folder. */
  slug: string;
  /** snake_case: the resource's key in sync_checkpoints and sync_runs, and the table (synced_<snake>). */
  snake: string;
  /** camelCase: the declarations' identifiers (`tariffs`). */
  camel: string;
  /** PascalCase, singular: the Prisma model (Synced<Singular>) and the row type. */
  singular: string;
  /** PascalCase, plural: the page's function names (`loadTariffs`, `TariffsPage`). */
  pascal: string;
  /** For people, lower case ("tariffs", "charging profiles"). */
  words: string;
  /** For people, capitalised ("Tariffs"): the nav and the page's heading. */
  title: string;
};

/** kebab-case: lower-case letters and digits, words joined by single hyphens, starting with a letter. */
const SLUG = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
const MAX_SLUG = 40;

/** Names the template already uses for a resource or a section: a second one would collide. */
export const TAKEN = new Set(["teams", "charge-points", "charges", "sessions", "energy", "overview", "export"]);

export class NameError extends Error {}

/**
 * The names of a resource. `singular` is the model's name in words (e.g. "tariff"); without it, a
 * plural's last word loses its "s" ("ies" → "y"): override it for a plural that rule gets wrong.
 */
export function resourceNames(slug: string, singular?: string): ResourceNames {
  if (!SLUG.test(slug) || slug.length > MAX_SLUG) {
    throw new NameError(`"${slug}" is not a resource name: use kebab-case, plural, up to ${MAX_SLUG} characters (e.g. tariffs, charging-profiles)`);
  }
  if (TAKEN.has(slug)) throw new NameError(`"${slug}" is already a resource or a section of this app`);
  const words = slug.split("-");
  const single = singular ?? singularOf(slug);
  if (!SLUG.test(single)) throw new NameError(`"${single}" is not a singular name: kebab-case, e.g. tariff`);
  const cap = (word: string) => word[0]!.toUpperCase() + word.slice(1);
  return {
    slug,
    snake: words.join("_"),
    camel: words[0] + words.slice(1).map(cap).join(""),
    singular: single.split("-").map(cap).join(""),
    pascal: words.map(cap).join(""),
    words: words.join(" "),
    title: cap(words.join(" ")),
  };
}

function singularOf(slug: string): string {
  if (slug.endsWith("ies")) return `${slug.slice(0, -3)}y`;
  if (slug.endsWith("ses") || slug.endsWith("xes")) return slug.slice(0, -2);
  if (slug.endsWith("s") && !slug.endsWith("ss")) return slug.slice(0, -1);
  return `${slug}-item`;
}
