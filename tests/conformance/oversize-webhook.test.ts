// webhooks.oversize against a receiver in another process (webhook-front.ts): an ordinary HTTP server answers a body
// over its limit with 413 before reading it and closes the connection while the upload goes on, a correct answer
// however the race on the wire falls; one that reads the whole body and then drops the connection unanswered, or reads
// and processes it, fails.
import { afterAll, describe, expect, it } from "vitest";
import { evidenceOf, setUpWrongAppWorld } from "./helpers";
import { startWebhookFront, type WebhookFront } from "./webhook-front";

let front: WebhookFront | undefined;
const world = setUpWrongAppWorld({
  webhookUrl: async (appWebhookUrl) => {
    front = await startWebhookFront(appWebhookUrl);
    return front.url;
  },
});
afterAll(async () => front?.close());

describe("webhooks.oversize against a separate HTTP server", () => {
  it("passes 10 of 10 runs against one that answers 413 on Content-Length alone and closes", { timeout: 120_000 }, async () => {
    await front!.setMode("refuse-unread");
    const verdicts: string[] = [];
    for (let run = 0; run < 10; run++) {
      const result = await world.judge("webhooks.oversize");
      verdicts.push(`${result.verdict}: ${result.evidence[0]}`);
    }
    expect(verdicts.filter((v) => !v.startsWith("PASS")), verdicts.join("\n")).toEqual([]);
    // Each answered 413 or was cut during the upload: both are the refusal, and the evidence says which.
    for (const verdict of verdicts) expect(verdict).toMatch(/the app (answered 413 \(refused or ignored, never a 5xx\)|closed the connection during the upload, before an answer could be read \(refused unread\))/);
  });

  it("fails against one that reads the whole body and closes the connection without an answer", async () => {
    await front!.setMode("read-then-drop");
    const result = await world.judge("webhooks.oversize");
    expect(result.verdict, evidenceOf(result)).toBe("FAIL");
    expect(evidenceOf(result)).toMatch(/the app answered transport error: .+ \(refused or ignored, never a 5xx\)/);
  });

  it("fails against one that reads and processes the oversize body", async () => {
    await front!.setMode("forward");
    const result = await world.judge("webhooks.oversize", "no-size-limit");
    expect(result.verdict, evidenceOf(result)).toBe("FAIL");
    expect(evidenceOf(result)).toContain("the app answered 200");
    expect(evidenceOf(result)).toContain("after the delivery, the page called the API for the install: none");
  });
});
