// Why a staff sign-in was turned away before its password was checked, as it travels to the form.
//
// next-auth 4 puts the message of an error thrown in `authorize` into the `error` parameter of
// its answer (`signIn()` returns it as `result.error`; without JavaScript the form's page gets
// `?error=`), so the reason and the wait travel as one short string: `limited.42`, `busy.2`.
//
// Not server-only: the sign-in form (a client component) reads it too. It holds no secret.

export type SignInRefusal = { reason: "limited" | "busy"; retryAfterSeconds: number };

export function formatSignInRefusal({ reason, retryAfterSeconds }: SignInRefusal): string {
  return `${reason}.${Math.max(1, Math.ceil(retryAfterSeconds))}`;
}

/** The refusal in a next-auth `error` value, or null for any other error (e.g. CredentialsSignin). */
export function parseSignInRefusal(error: string | null | undefined): SignInRefusal | null {
  const match = /^(limited|busy)\.([1-9][0-9]{0,5})$/.exec(error ?? "");
  return match ? { reason: match[1] as SignInRefusal["reason"], retryAfterSeconds: Number(match[2]) } : null;
}

/** What the form says. It names no account and does not say whether the password was right. */
export function describeSignInRefusal({ reason, retryAfterSeconds }: SignInRefusal): string {
  const wait = retryAfterSeconds === 1 ? "1 s" : `${retryAfterSeconds} s`;
  return reason === "limited"
    ? `Too many sign-in attempts. Try again in ${wait}.`
    : `The server is busy checking other sign-ins. Try again in ${wait}.`;
}
