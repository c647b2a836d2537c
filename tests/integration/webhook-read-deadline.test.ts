// A webhook body must arrive within WEBHOOK_READ_TIMEOUT_MS (default 5 s, well inside the service's
// 10-second deadline, contract §6). Raw TCP clients play a sender that stalls half-way through its
// body and one that trickles it a byte at a time: each gets 408 at the deadline, nothing is recorded,
// and genuine deliveries are answered as usual meanwhile.
import { createHmac, randomUUID } from "node:crypto";
import net from "node:net";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { closeSql, resetWorld, sql, stack } from "../helpers/stack";

beforeEach(resetWorld);
afterAll(closeSql);

const READ_TIMEOUT_MS = Number(process.env.WEBHOOK_READ_TIMEOUT_MS ?? 5_000);
/** The answer may come this much after the deadline on a busy machine, and still be "at the deadline". */
const MARGIN_MS = 2_000;

function signedDelivery(installId: number) {
  const body = JSON.stringify({
    id: `whd_${randomUUID()}`,
    type: "install.created",
    delivered_at: Math.floor(Date.now() / 1000),
    data: { install_id: installId, operator_id: 1001, slug: "northwind-charging" },
  });
  return { body, signature: `sha256=${createHmac("sha256", stack.webhookSecret).update(body).digest("hex")}` };
}

type RawAnswer = { status: number; elapsedMs: number; closedByServer: Promise<boolean>; socket: net.Socket };

/**
 * Sends the request head and `sendFirst` bytes of the body at once, then the rest one byte every
 * `trickleEveryMs` (or never, when it is undefined), and resolves with the status line's code and
 * the time from the first body byte to the answer.
 */
function slowPost(body: string, signature: string, sendFirst: number, trickleEveryMs?: number): Promise<RawAnswer> {
  const url = new URL(stack.appUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    const bytes = Buffer.from(body);
    let trickle: NodeJS.Timeout | undefined;
    let started = 0;
    let received = "";
    let closed: (value: boolean) => void = () => undefined;
    const closedByServer = new Promise<boolean>((resolveClosed) => (closed = resolveClosed));
    socket.setEncoding("utf8");
    socket.on("error", reject);
    socket.on("connect", () => {
      socket.write(
        `POST /api/webhooks HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${bytes.length}\r\nX-Volt-Signature: ${signature}\r\n\r\n`,
      );
      started = performance.now();
      socket.write(bytes.subarray(0, sendFirst));
      let next = sendFirst;
      if (trickleEveryMs !== undefined) {
        trickle = setInterval(() => {
          if (next < bytes.length - 1 && !socket.destroyed) socket.write(bytes.subarray(next, ++next)); // never the last byte
        }, trickleEveryMs);
      }
    });
    socket.on("data", (chunk: string) => {
      const wasEmpty = received === "";
      received += chunk;
      const status = /^HTTP\/1\.1 (\d{3})/.exec(received);
      if (wasEmpty && status) resolve({ status: Number(status[1]), elapsedMs: performance.now() - started, closedByServer, socket });
    });
    socket.on("close", () => {
      clearInterval(trickle);
      closed(true);
      if (!received) reject(new Error("the server closed the connection without an answer"));
    });
    // Safety net: never leave the socket open after the test.
    setTimeout(() => socket.destroy(), READ_TIMEOUT_MS + 10_000).unref();
  });
}

async function deliver(installId: number): Promise<number> {
  const { body, signature } = signedDelivery(installId);
  const response = await fetch(`${stack.appUrl}/api/webhooks`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Volt-Signature": signature },
    body,
  });
  await response.arrayBuffer();
  return response.status;
}

describe("the webhook body's read deadline", () => {
  it("a stalled and a trickling sender each get 408 at the deadline, nothing is recorded, and genuine deliveries carry on", async () => {
    const stalled = signedDelivery(7101);
    const trickling = signedDelivery(7102);
    const stalledAnswer = slowPost(stalled.body, stalled.signature, Math.floor(stalled.body.length / 2));
    const tricklingAnswer = slowPost(trickling.body, trickling.signature, 10, 200);

    // While both hold their requests open, the app serves a genuine delivery at once.
    const during = performance.now();
    expect(await deliver(7103)).toBe(200);
    expect(performance.now() - during).toBeLessThan(READ_TIMEOUT_MS / 2);

    for (const answer of [await stalledAnswer, await tricklingAnswer]) {
      expect(answer.status).toBe(408);
      expect(answer.elapsedMs).toBeGreaterThanOrEqual(READ_TIMEOUT_MS - 50);
      expect(answer.elapsedMs).toBeLessThan(READ_TIMEOUT_MS + MARGIN_MS);
      // The rest of the body is not wanted: the server closes the connection.
      expect(await answer.closedByServer).toBe(true);
    }

    // Nothing of the two was recorded; the genuine one was.
    const rows = await sql<{ install_id: number }>("SELECT install_id FROM webhook_deliveries ORDER BY install_id");
    expect(rows.map((r) => r.install_id)).toEqual([7103]);
    // And the app still answers afterwards.
    expect(await deliver(7104)).toBe(200);
  });

  it("a whole body sent at once is not affected", async () => {
    const { body, signature } = signedDelivery(7105);
    const answer = await slowPost(body, signature, Buffer.byteLength(body));
    answer.socket.destroy();
    expect(answer.status).toBe(200);
    expect(answer.elapsedMs).toBeLessThan(READ_TIMEOUT_MS);
  });
});
