// Encryption at rest for OAuth tokens: AES-256-GCM with versioned keys.
//
// A sealed value reads `v1.<keyId>.<iv>.<ciphertext>.<tag>` (base64url parts). The key id travels
// with the ciphertext, so keys can rotate: the first key in TOKEN_ENCRYPTION_KEYS seals, every
// listed key opens. The install's row id is bound in as associated data, so a ciphertext copied
// onto another install's row fails to open instead of handing that install someone else's token.
import "server-only";
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

export type EncryptionKey = { id: string; key: Buffer };

const FORMAT = "v1";
const IV_BYTES = 12; // the GCM standard nonce size
const TAG_BYTES = 16;

export class TokenDecryptionError extends Error {
  constructor(reason: string) {
    super(`stored token could not be decrypted: ${reason}`);
    this.name = "TokenDecryptionError";
  }
}

export function sealToken(plaintext: string, boundTo: string, keys: readonly EncryptionKey[]): string {
  const current = keys[0];
  if (!current) throw new Error("no token encryption key configured");
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", current.key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(boundTo, "utf8"));
  const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return [FORMAT, current.id, iv.toString("base64url"), ciphertext.toString("base64url"), cipher.getAuthTag().toString("base64url")].join(".");
}

export function openToken(sealed: string, boundTo: string, keys: readonly EncryptionKey[]): string {
  const parts = sealed.split(".");
  if (parts.length !== 5 || parts[0] !== FORMAT) throw new TokenDecryptionError("unknown format");
  const [, keyId, ivPart, ciphertextPart, tagPart] = parts as [string, string, string, string, string];
  const key = keys.find((k) => k.id === keyId);
  if (!key) throw new TokenDecryptionError(`key "${keyId}" is not configured`);
  const decipher = createDecipheriv("aes-256-gcm", key.key, Buffer.from(ivPart, "base64url"), { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(boundTo, "utf8"));
  decipher.setAuthTag(Buffer.from(tagPart, "base64url"));
  try {
    return Buffer.concat([decipher.update(Buffer.from(ciphertextPart, "base64url")), decipher.final()]).toString("utf8");
  } catch {
    throw new TokenDecryptionError("authentication failed (wrong key, wrong install, or tampered data)");
  }
}

/** The key id a sealed value was written with (for re-encryption after a key rotation). */
export function sealedKeyId(sealed: string): string | undefined {
  const parts = sealed.split(".");
  return parts.length === 5 ? parts[1] : undefined;
}
