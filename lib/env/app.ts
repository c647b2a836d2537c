// The app's own address, its database, and the secret of its session cookies.
//
// One concern's part of the configuration schema; lib/env.ts merges every part into the one schema
// validated at start-up, so each variable is still checked, and reported, in one place.
import "server-only";
import { z } from "zod";
import { urlString } from "./formats";

export const appShape = {
  /** The app's public origin, e.g. https://partner.example.com */
  APP_URL: urlString,
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, "must be a postgresql:// URL"),
  /** Connections per app instance. Mind the database's max_connections across all instances. */
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),

  /** next-auth signs and encrypts session cookies with this. */
  NEXTAUTH_SECRET: z.string().min(32, "use at least 32 random characters"),
};
