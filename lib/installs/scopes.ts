// Whether an install's grant covers a resource. contract §2: scopes are `<resource>` or
// `<resource>:<permission>`, and a bare resource means read. One check for the sync (which asks for
// nothing the operator did not share) and the pages (which then say "not shared" rather than wait).
// Not server-only: it is a pure function of the granted scopes.

export function grantsResource(grantedScopes: readonly string[], resource: string): boolean {
  return grantedScopes.some((scope) => scope === resource || scope.startsWith(`${resource}:`));
}
