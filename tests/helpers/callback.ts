// Requests to the app's redirect_uri as the integration tests make them: without following the
// redirect, reading the failure page's reason from it, and with made-up codes that get as far as
// the identity provider.
import net from "node:net";
import { stack } from "./stack";

/** GET without following the redirect, so the test sees where the callback sends the browser. */
export function visit(url: URL | string): Promise<Response> {
  return fetch(url, { redirect: "manual" });
}

/** The reason of /install/failed?reason=… the callback redirected to, or null. */
export function failureReason(response: Response): string | null {
  const location = response.headers.get("location");
  return location ? new URL(location).searchParams.get("reason") : null;
}

/**
 * A callback with a made-up code that gets as far as the identity provider: well-formed (20+
 * characters, lib/oauth/authorization-code.ts) and naming the right issuer (RFC 9207).
 */
export function forgedCallback(code: string): string {
  const wellFormed = `${code}-0123456789abcdef`;
  return `${stack.appUrl}/oauth/callback?${new URLSearchParams({ code: wellFormed, state: "abcdefgh12", iss: process.env.OAUTH_ISSUER! })}`;
}

/** A port nothing listens on right now, for a server a test starts itself. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
