// Reads a request body as raw bytes, refusing more than `maxBytes` without buffering it all, and
// giving up when the whole body has not arrived within `timeoutMs`.
//
// The deadline is written out here because neither the platform nor Next.js offers one per route:
// Node's server-wide `requestTimeout` is five minutes by default and covers every route alike, and
// `request.signal` fires only when the client goes away, not when it goes quiet.
import "server-only";

export class BodyTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`request body exceeds ${maxBytes} bytes`);
    this.name = "BodyTooLargeError";
  }
}

export class BodyTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`request body did not arrive within ${timeoutMs} ms`);
    this.name = "BodyTimeoutError";
  }
}

export async function readBodyWithLimit(request: Request, maxBytes: number, options: { timeoutMs?: number } = {}): Promise<Uint8Array> {
  const declared = Number(request.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > maxBytes) throw new BodyTooLargeError(maxBytes);
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();

  // One timer for the whole body, not per chunk: a sender trickling a byte a second must not hold
  // the request open any longer than one that stops altogether.
  let timer: NodeJS.Timeout | undefined;
  const deadline =
    options.timeoutMs === undefined
      ? undefined
      : new Promise<never>((_, reject) => {
          const timeoutMs = options.timeoutMs!;
          timer = setTimeout(() => reject(new BodyTimeoutError(timeoutMs)), timeoutMs);
        });

  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await (deadline ? Promise.race([reader.read(), deadline]) : reader.read());
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) throw new BodyTooLargeError(maxBytes);
      chunks.push(value);
    }
  } catch (error) {
    // Too large: stop reading, the rest is not wanted. On a timeout a read is still pending, and
    // cancelling then waits for that read (for bytes that may never come); the caller answers and
    // closes the connection instead, which ends the pending read too.
    if (error instanceof BodyTooLargeError) await reader.cancel().catch(() => undefined);
    throw error;
  } finally {
    clearTimeout(timer);
  }

  const body = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}
