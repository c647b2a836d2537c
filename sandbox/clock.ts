// The sandbox clock: real time plus an offset that tests move forward through the control API.
// Every expiry in the sandbox (codes, tokens, consent requests, rate-limit windows) reads this clock. The signed
// delivered_at of webhooks does not: it is wall-clock time (webhooks.ts, README decision 30).

export class SandboxClock {
  constructor(private offsetSeconds = 0) {}

  nowMs(): number {
    return Date.now() + this.offsetSeconds * 1000;
  }

  now(): Date {
    return new Date(this.nowMs());
  }

  get offset(): number {
    return this.offsetSeconds;
  }

  advance(seconds: number): void {
    this.offsetSeconds += seconds;
  }

  setOffset(seconds: number): void {
    this.offsetSeconds = seconds;
  }
}
