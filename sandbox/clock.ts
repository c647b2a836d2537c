// The sandbox clocks. Two test devices, apart on purpose:
//   - the offset: real time plus seconds that tests move forward through the control API. Every expiry in the sandbox
//     (codes, tokens, consent requests, rate-limit windows) reads it; it fast-forwards lifetimes (README decision 30).
//   - the wall-clock skew: how far the service's own wall clock is from real time (README decision 60). What its
//     answers' `Date` headers and its webhooks' signed `delivered_at` carry; 0 unless a test plays a skewed clock.

export class SandboxClock {
  private wallSkew = 0;

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

  /** The service's wall clock, in ms since the epoch: real time plus the skew. */
  wallNowMs(): number {
    return Date.now() + this.wallSkew * 1000;
  }

  get wallSkewSeconds(): number {
    return this.wallSkew;
  }

  setWallSkew(seconds: number): void {
    this.wallSkew = seconds;
  }
}
