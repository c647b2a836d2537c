// readBodyWithLimit (lib/http/read-body.ts): the whole body within the deadline, or BodyTimeoutError; never more
// than the limit. The webhook route answers these 408 and 413 (tests/integration/webhook-read-deadline.test.ts).
import { describe, expect, it } from "vitest";
import { BodyTimeoutError, BodyTooLargeError, readBodyWithLimit } from "@/lib/http/read-body";

/** A request whose body yields `chunks`, one every `everyMs`, then ends, or stays open when `end` is false. */
function streamedRequest(chunks: string[], everyMs: number, end = true): Request {
  let index = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      await new Promise((resolve) => setTimeout(resolve, everyMs));
      if (index < chunks.length) controller.enqueue(new TextEncoder().encode(chunks[index++]));
      else if (end) controller.close();
      else await new Promise(() => undefined); // stalls for good
    },
  });
  return new Request("http://app.test/api/webhooks", { method: "POST", body, duplex: "half" } as RequestInit);
}

describe("readBodyWithLimit", () => {
  it("returns the whole body when it arrives in time", async () => {
    const body = await readBodyWithLimit(streamedRequest(["{\"a\":", "1}"], 5), 1024, { timeoutMs: 1_000 });
    expect(new TextDecoder().decode(body)).toBe('{"a":1}');
  });

  it("gives up at the deadline when the sender stalls mid-body", async () => {
    const started = performance.now();
    await expect(readBodyWithLimit(streamedRequest(["{\"a\":"], 5, false), 1024, { timeoutMs: 300 })).rejects.toBeInstanceOf(BodyTimeoutError);
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it("counts the deadline for the whole body, not per chunk: a trickle does not keep it open", async () => {
    const trickle = Array.from({ length: 100 }, () => "x");
    await expect(readBodyWithLimit(streamedRequest(trickle, 50), 1024, { timeoutMs: 400 })).rejects.toBeInstanceOf(BodyTimeoutError);
  });

  it("refuses more than the limit, declared or streamed", async () => {
    await expect(readBodyWithLimit(streamedRequest(["x".repeat(600), "x".repeat(600)], 1), 1024, { timeoutMs: 1_000 })).rejects.toBeInstanceOf(BodyTooLargeError);
    const declared = new Request("http://app.test/", { method: "POST", body: "x".repeat(2048), headers: { "content-length": "2048" } });
    await expect(readBodyWithLimit(declared, 1024)).rejects.toBeInstanceOf(BodyTooLargeError);
  });
});
