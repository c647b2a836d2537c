/** The install has no token the app may use: none stored yet, or its chain is gone. */
export class NoUsableTokenError extends Error {
  constructor(readonly reason: "no_grant" | "reinstall_needed") {
    super(`no usable access token: ${reason}`);
    this.name = "NoUsableTokenError";
  }
}
