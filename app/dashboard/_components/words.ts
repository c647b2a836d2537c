// A value the contract did not list (a state, a type), shown readably rather than raw: "busy-new" → "Busy new".
export function humanize(value: string): string {
  const words = value.replace(/[-_]+/g, " ").trim();
  return words ? words[0]!.toUpperCase() + words.slice(1) : value;
}
