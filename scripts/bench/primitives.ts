// The cost of the security primitives on the hot paths, in process (before the stack starts).
import { randomBytes } from "node:crypto";
import { opsPerSecond } from "./lib";
import { openToken, sealToken } from "../../lib/oauth/token-crypto";
import { computeWebhookSignature, verifyWebhookSignature } from "../../lib/webhooks/signature";

export function primitives() {
  console.log("\n== primitives (in process) ==");
  const keys = [{ id: "k1", key: randomBytes(32) }];
  const token = `volt_at_${randomBytes(32).toString("base64url")}`;
  const sealed = sealToken(token, "install-row-id", keys);
  opsPerSecond("token seal (AES-256-GCM)", 50_000, () => sealToken(token, "install-row-id", keys));
  opsPerSecond("token open (AES-256-GCM)", 50_000, () => openToken(sealed, "install-row-id", keys));
  const body = new TextEncoder().encode(JSON.stringify({ id: "whd_1", type: "install.created", delivered_at: 1, data: { install_id: 1 } }));
  const header = computeWebhookSignature(body, "bench-webhook-secret-0123");
  opsPerSecond("webhook signature verify (HMAC-SHA256)", 100_000, () => verifyWebhookSignature(body, header, ["bench-webhook-secret-0123"]));
}
