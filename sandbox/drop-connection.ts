// Closing a connection without an HTTP answer: what a server that crashed mid-request, or a gateway that gave up on
// it, leaves a client with (fetch rejects: "other side closed"). Used by the token endpoint's drop-connection faults
// and the partner API's timeout fault.
import { IncomingMessage } from "node:http";
import type { Context } from "hono";

/** Destroys the request's socket (Node server only; elsewhere a bare 500). The returned Response is never sent. */
export function dropConnection(c: Context): Response {
  const bindings: unknown = c.env;
  if (typeof bindings === "object" && bindings !== null && "incoming" in bindings && bindings.incoming instanceof IncomingMessage) {
    bindings.incoming.socket.destroy();
  }
  return new Response(null, { status: 500 });
}
