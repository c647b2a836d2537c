// What an authorization code can look like, checked before the code costs anything (a database row,
// a token-endpoint call): a stranger's random strings are turned away for free.
//
// RFC 6749 §A.11: code = 1*VSCHAR (printable ASCII, %x20-7E). The contract (§2) says only "opaque
// string with a code prefix"; the sandbox issues `volt_ac_` + 43 characters, Hydra `ory_ac_` + two
// 43-character parts (94 in all), and other standard servers issue longer ones (some encode a
// JWT-like blob of a thousand characters or more). So no prefix is required, and the bounds are:
// - at least 20 characters: RFC 6749 §10.10 wants a guess to succeed with probability at most
//   2^-128, and 20 VSCHARs (95 symbols, 6.57 bits each) is the least that can carry 128 bits;
// - at most 2048 characters, well above any server seen, well below what costs anything to refuse.
import "server-only";
import { z } from "zod";

export const AUTHORIZATION_CODE_MIN_LENGTH = 20;
export const AUTHORIZATION_CODE_MAX_LENGTH = 2048;

export const AuthorizationCodeSchema = z
  .string()
  .min(AUTHORIZATION_CODE_MIN_LENGTH)
  .max(AUTHORIZATION_CODE_MAX_LENGTH)
  .regex(/^[\x20-\x7e]+$/, "an authorization code is printable ASCII (RFC 6749 §A.11 VSCHAR)");
