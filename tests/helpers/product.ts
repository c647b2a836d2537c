// The product's names as the tests see them: read from lib/config/product.ts, never written out, so
// that a fork's `npm run rename` breaks no test.
import { PRODUCT } from "../../lib/config/product";

export { PRODUCT };

/** Matches a `name=value` pair (or a Set-Cookie line) of this cookie, with or without its `__Secure-`/`__Host-` prefix. */
export function cookiePattern(name: string): RegExp {
  return new RegExp(`^(__Secure-|__Host-)?${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}=.`);
}
