// The webhook handler registry (lib/webhooks/handlers/index.ts): the one list of the events the app
// acts on, from which the receiver finds both the full handler and the one-statement path.
// It reads the registry as it is, so a fork's own events are checked the same way.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { WebhookEnvelopeSchema } from "@/lib/webhooks/envelope";
import { WEBHOOK_HANDLERS, webhookHandlerFor } from "@/lib/webhooks/handlers";

const envelopeOf = (type: string) => ({ id: "whd_1", type, delivered_at: 1_700_000_000, data: {} });

describe("the webhook handler registry", () => {
  it("lists each event type once", () => {
    const types = WEBHOOK_HANDLERS.map((handler) => handler.type);
    expect(types.length).toBeGreaterThan(0);
    expect(new Set(types).size).toBe(types.length);
  });

  it("lists only types the envelope schema accepts, so every listed handler can be reached", () => {
    for (const { type } of WEBHOOK_HANDLERS) {
      const parsed = WebhookEnvelopeSchema.safeParse(envelopeOf(type));
      expect(parsed.success, type).toBe(true);
      expect(parsed.data?.type).toBe(type);
    }
  });

  it("finds each listed handler by its type, with its one-statement path when it has one", () => {
    for (const handler of WEBHOOK_HANDLERS) {
      expect(webhookHandlerFor(handler.type)).toBe(handler);
      expect(typeof handler.handle).toBe("function");
      if (handler.fastPath !== undefined) expect(typeof handler.fastPath).toBe("function");
    }
  });

  it("finds nothing for a type it does not list, so the delivery is recorded as ignored", () => {
    // Names every JavaScript object inherits included: an event type is text from the network.
    for (const type of ["install.renamed", "toString", "constructor", "__proto__", "hasOwnProperty", "valueOf"]) {
      expect(WebhookEnvelopeSchema.safeParse(envelopeOf(type)).success, type).toBe(true);
      expect(webhookHandlerFor(type), type).toBeUndefined();
    }
  });

  it("has every handler file of the folder listed, and nothing else there", () => {
    // One file per event (conventions: a handler file is named after its event): a file that is not
    // listed would be dead code the receiver never calls.
    const folder = join(__dirname, "../../lib/webhooks/handlers");
    const files = readdirSync(folder).filter((name) => name.endsWith(".ts") && name !== "index.ts");
    const expected = WEBHOOK_HANDLERS.map((handler) => `${handler.type.replaceAll(".", "-")}.ts`);
    expect(files.sort()).toEqual(expected.sort());
  });
});
