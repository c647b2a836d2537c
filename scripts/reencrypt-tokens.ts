// npm run tokens:reencrypt: re-seals every stored token under the current encryption key.
//
// Key rotation: put a new key first in TOKEN_ENCRYPTION_KEYS (keep the old one after it), deploy,
// run this, then remove the old key. Until then both keys decrypt.
import { db } from "../lib/db/client";
import { reencryptAllGrants } from "../lib/oauth/token-vault";
import { assertValidEnvironment } from "../lib/env";

// The whole configuration first: a bad value stops here with one message, not in a loop of failures.
assertValidEnvironment("tokens:reencrypt");

const { checked, reencrypted } = await reencryptAllGrants(db());
console.log(`tokens:reencrypt: ${reencrypted} of ${checked} grant(s) re-encrypted under the current key.`);
await db().$disconnect();
