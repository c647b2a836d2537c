// A counting semaphore that never queues: `tryAcquire` either hands out a slot at once or says no.
//
// Hand-written on purpose: the usual libraries (p-limit, async-sema, ...) queue the callers they
// cannot serve yet, and a queue is what must not exist here. When a burst of sign-ins arrives, a
// queue of scrypt jobs grows without bound, holds every request open, and (worse) hands all of
// libuv's threads to scrypt, so database connections and webhooks starve. Refusing at once keeps
// the rest of the server responsive and lets the person (or attacker) retry later.
import "server-only";

export type Release = () => void;

export class TrySemaphore {
  private inUse = 0;

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new Error("a semaphore needs at least one slot");
  }

  /** A slot's release function, or null when every slot is taken. Release exactly once. */
  tryAcquire(): Release | null {
    if (this.inUse >= this.limit) return null;
    this.inUse += 1;
    let released = false;
    return () => {
      // A double release would silently raise the limit; ignore the second call instead.
      if (released) return;
      released = true;
      this.inUse -= 1;
    };
  }

  /** Runs `work` in a slot, or returns `busy` without running it when none is free. */
  async run<T>(work: () => Promise<T>): Promise<{ busy: true } | { busy: false; value: T }> {
    const release = this.tryAcquire();
    if (!release) return { busy: true };
    try {
      return { busy: false, value: await work() };
    } finally {
      release();
    }
  }

  get available(): number {
    return this.limit - this.inUse;
  }
}
