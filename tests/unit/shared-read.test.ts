// Identical API reads in flight share one request (lib/partner-api/shared-read.ts): the same answer
// or the same error for every caller, nothing kept once the read settles, different keys apart.
import { describe, expect, it } from "vitest";
import { sharedRead, sharedReadsInFlight } from "@/lib/partner-api/shared-read";

/** A read that settles when the test says so, counting how often it was started. */
function controlledRead<T>() {
  let starts = 0;
  let settle!: { resolve: (value: T) => void; reject: (error: Error) => void };
  const read = () => {
    starts += 1;
    return new Promise<T>((resolve, reject) => (settle = { resolve, reject }));
  };
  return { read, starts: () => starts, settle: () => settle };
}

describe("sharedRead", () => {
  it("callers of the same key while it is in flight get the one answer, from one read", async () => {
    const source = controlledRead<{ page: number }>();
    const callers = [sharedRead("install-1 charge-points 0 10", source.read), sharedRead("install-1 charge-points 0 10", source.read)];
    expect(source.starts()).toBe(1);
    source.settle().resolve({ page: 0 });
    const [first, second] = await Promise.all(callers);
    expect(first).toEqual({ page: 0 });
    expect(second).toBe(first);
  });

  it("every caller gets the same error, and the next call reads again", async () => {
    const source = controlledRead<number>();
    const callers = [sharedRead("k", source.read), sharedRead("k", source.read)].map((p) => p.catch((error: Error) => error.message));
    source.settle().reject(new Error("unavailable"));
    expect(await Promise.all(callers)).toEqual(["unavailable", "unavailable"]);
    expect(sharedReadsInFlight()).toBe(0);

    const again = sharedRead("k", source.read);
    expect(source.starts()).toBe(2);
    source.settle().resolve(7);
    expect(await again).toBe(7);
  });

  it("keeps nothing after a read settles: a later identical call is a new read", async () => {
    const source = controlledRead<number>();
    const first = sharedRead("k2", source.read);
    source.settle().resolve(1);
    await first;
    const second = sharedRead("k2", source.read);
    expect(source.starts()).toBe(2);
    source.settle().resolve(2);
    expect(await second).toBe(2);
  });

  it("different keys (another install, another page) are different reads", async () => {
    const a = controlledRead<string>();
    const b = controlledRead<string>();
    const reads = [sharedRead("install-1 charge-points 0 10", a.read), sharedRead("install-2 charge-points 0 10", b.read)];
    expect([a.starts(), b.starts()]).toEqual([1, 1]);
    a.settle().resolve("one");
    b.settle().resolve("two");
    expect(await Promise.all(reads)).toEqual(["one", "two"]);
  });
});
