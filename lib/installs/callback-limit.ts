// The redirect_uri is public: anyone can call it with a made-up code, and each call with a
// well-formed code costs a claim row and a token-endpoint call (an amplifier, about 125 per second
// were seen). Malformed codes are refused for free (lib/oauth/authorization-code.ts); well-formed
// ones are limited per client address here, before anything else is spent.
//
// CALLBACK_REQUESTS_PER_MINUTE (default 20) is far above what a person does (one approval, perhaps a
// reload or a second tab), and leaves room for an office of operators behind one address.
import "server-only";
import { addressLimitKey, clientAddress } from "@/lib/http/client-address";
import { logger } from "@/lib/log";
import { AuthorizationCodeSchema } from "@/lib/oauth/authorization-code";
import { rateLimits, type LimitVerdict } from "@/lib/rate-limit";

/** Counts this callback against its address's limit, if it carries a code that could be spent. */
export async function takeCallbackAttempt(query: URLSearchParams, headers: Headers): Promise<LimitVerdict> {
  // Callbacks without a well-formed code spend nothing (completeInstall refuses them at once).
  if (!AuthorizationCodeSchema.safeParse(query.get("code")).success) return { allowed: true };
  const address = clientAddress(headers);
  // An IPv6 client is counted by its /64, all of which it may use (lib/http/client-address.ts).
  const verdict = await rateLimits().callbackAddress.take(addressLimitKey(address));
  if (!verdict.allowed) logger.warn({ address, retryAfterSeconds: verdict.retryAfterSeconds }, "install callback refused: too many requests from this address");
  return verdict;
}
